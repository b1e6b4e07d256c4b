import { BatchWriteCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, expect, it } from "vitest";
import { backfillReports } from "@invoicing/core/reports/backfill";
import { newClient, ok } from "../invoices/fixtures";
import { createTestEnv, type TestEnv, type TestUser } from "../support/env";
import { expectedRevenue, expectedTax, readRecords } from "./oracle";

/**
 * The backfill (docs/reports.md): a user whose records exist but were never counted (the reports
 * shipped after them: here, their aggregate and ledger items are removed after the stream counted
 * them) gets exact reports from it; and it is safe while the stream keeps applying changes — run
 * concurrently with new changes, the stream reading them, and a second reader delivering every
 * record again from the stream's start, the reports still equal the records, each counted once.
 */
let env: TestEnv;
let user: TestUser;
let clientId: number;
const FROM = "2026-01";
const TO = "2026-11";

beforeAll(async () => {
  env = await createTestEnv({ now: "2026-11-22T09:30:00.000Z" });
  user = await env.user();
  clientId = (await newClient(user, { currency: "EUR" })).id;
});

async function issue(month: string, unitPrice: string, taxRate = "0.19") {
  const draft = ok(
    await user.call("POST", "/invoices", {
      clientId,
      issueDate: `${month}-15`,
      lineItems: [{ description: "Work", unitPrice, taxRate }],
    }),
    201,
  ).body;
  ok(await user.call("POST", `/invoices/${draft.id}/finalize`));
  ok(await user.call("POST", `/invoices/${draft.id}/send`, { to: "ap@example.test" }));
  return draft.id as number;
}

async function forgetReports(): Promise<number> {
  const { db } = env.deps;
  const out = await db.doc.send(
    new QueryCommand({
      TableName: db.table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :p)",
      ExpressionAttributeValues: { ":pk": `USER#${user.userId}`, ":p": "REPORT" },
    }),
  );
  const items = out.Items ?? [];
  for (let i = 0; i < items.length; i += 25) {
    await db.doc.send(
      new BatchWriteCommand({
        RequestItems: {
          [db.table]: items.slice(i, i + 25).map((it) => ({ DeleteRequest: { Key: { pk: it.pk, sk: it.sk } } })),
        },
      }),
    );
  }
  return items.length;
}

const reports = async () => ({
  revenue: ok(await user.call("GET", `/reports/revenue?from=${FROM}&to=${TO}`)).body,
  tax: ok(await user.call("GET", `/reports/tax?from=${FROM}&to=${TO}`)).body,
});
const oracle = async () => {
  const records = await readRecords(user);
  return { revenue: expectedRevenue(records, FROM, TO), tax: expectedTax(records, FROM, TO) };
};

it("rebuilds a user's reports from the records, even while the stream applies changes", async () => {
  const ids: number[] = [];
  for (const [i, month] of ["2026-02", "2026-03", "2026-03", "2026-05", "2026-07", "2026-09"].entries()) {
    ids.push(await issue(month, `${100 + i}.10`, i % 2 ? "0.07" : "0.19"));
  }
  ok(
    await user.call("POST", `/invoices/${ids[0]}/payments`, {
      amount: "50.00",
      paymentMethod: "cash",
      paidAt: "2026-04-01",
    }),
    201,
  );
  ok(
    await user.call("POST", `/invoices/${ids[1]}/mark-paid`, { paymentMethod: "cash", paidAt: "2026-06-30T23:00:00Z" }),
  );
  ok(await user.call("POST", `/invoices/${ids[2]}/void`));
  await env.drainStream();

  // As if the reports had shipped after all this: nothing counted.
  expect(await forgetReports()).toBeGreaterThan(5);
  const expected = await oracle();
  expect(expected.revenue.length).toBeGreaterThan(0);
  expect((await reports()).revenue).toEqual([]);

  // The backfill alone.
  const first = await backfillReports(env.deps, user.userId);
  expect(first).toMatchObject({ records: 8, applied: 8, alreadyCounted: 0 }); // 6 invoices, 2 payments
  expect(await reports()).toEqual(expected);

  // Again from nothing, now while changes happen, the stream reads them, and a second reader
  // delivers every record again: the backfill and the stream count each version of a record once.
  await forgetReports();

  const later: Promise<unknown>[] = [];
  const changes = (async () => {
    const a = await issue("2026-10", "77.77");
    const p = ok(
      await user.call("POST", `/invoices/${ids[3]}/payments`, {
        amount: "10.00",
        paymentMethod: "cash",
        paidAt: "2026-08-08",
      }),
      201,
    ).body;
    await env.drainStream();
    ok(await user.call("DELETE", `/invoices/${ids[3]}/payments/${p.id}`), 204);
    ok(await user.call("POST", `/invoices/${a}/void`));
    ok(
      await user.call("POST", `/invoices/${ids[4]}/payments`, {
        amount: "1.00",
        paymentMethod: "cash",
        paidAt: "2026-09-30",
      }),
      201,
    );
    await env.drainStream();
  })();
  const again = env.newStreamReader();
  later.push(changes, again.drain(), backfillReports(env.deps, user.userId), env.drainStream());
  await Promise.all(later);
  again.close();
  await env.drainStream();

  const result = await reports();
  const truth = await oracle();
  expect(truth).not.toEqual(expected); // the concurrent changes moved the figures
  expect(result).toEqual(truth);

  // Run again, and the stream from its start again: nothing moves.
  const second = await backfillReports(env.deps, user.userId);
  expect(second.applied).toBe(0);
  expect(second.records).toBeGreaterThan(8);
  const third = env.newStreamReader();
  await third.drain();
  third.close();
  expect(await reports()).toEqual(truth);
}, 180_000); // many requests and three stream readers at once: a loaded machine needs far more than the default 30 s
