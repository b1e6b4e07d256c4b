import { ScanCommand, type ScanCommandOutput } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import { DUE_SHARDS } from "@invoicing/core/db/keys";
import { transition } from "@invoicing/core/db/transition";
import { jobs } from "@invoicing/core/jobs/all";
import { createTestEnv, type TestEnv, type TestUser } from "../support/env";
import { line, newClient, newInvoice, ok } from "../invoices/fixtures";

/**
 * Index attributes follow from the record (db/keys.ts withIndexKeys, used by putIfVersion,
 * transition and the item builders): after every kind of write, each stored invoice, estimate and
 * schedule is in the byStatus list of the status it holds, the byClient list of its client, and on
 * its job's due list exactly while its state says the job waits for it. The expectation is stated
 * here from the data model (docs/data-model.md), not computed by the code under test.
 */

let env: TestEnv;
let user: TestUser;
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** Which job's list a record is on: the first rule whose statuses hold it and whose date is set. */
const KINDS: Record<string, { due: string; statuses: string[]; at: string }[]> = {
  INVOICE: [
    { due: "overdue", statuses: ["sent"], at: "dueDate" },
    { due: "recurring", statuses: ["draft", "finalized"], at: "deliverAt" }, // an auto-send occurrence
  ],
  ESTIMATE: [{ due: "expire-estimates", statuses: ["sent"], at: "validUntil" }],
  SCHEDULE: [{ due: "recurring", statuses: ["active"], at: "nextRunAt" }],
};

async function listedRecords(): Promise<Record<string, any>[]> {
  const items: Record<string, any>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out: ScanCommandOutput = await env.deps.db.doc.send(
      new ScanCommand({ TableName: env.deps.db.table, ExclusiveStartKey: start, ConsistentRead: true }),
    );
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items.filter((item) => /^(INVOICE|ESTIMATE|SCHEDULE)#\d{10}$/.test(item.sk));
}

/** Every listed record's index attributes against what its state says they must be. */
async function expectIndexesFollowState(): Promise<Record<string, any>[]> {
  const records = await listedRecords();
  for (const item of records) {
    const kind = item.sk.split("#")[0] as string;
    const where = `${item.sk} (${item.status})`;
    expect(item.gsi1pk, where).toBe(`USER#${item.userId}#${kind}#STATUS#${item.status}`);
    expect(item.gsi1sk, where).toBe(String(item.id).padStart(10, "0"));
    expect(item.gsi2pk, where).toBe(`USER#${item.userId}#${kind}#CLIENT#${item.clientId}`);
    const rule = KINDS[kind]!.find((r) => r.statuses.includes(item.status) && typeof item[r.at] === "string");
    if (rule) {
      expect(item.dueSk, where).toBe(`${item[rule.at]}#${item.userId}#${item.sk}`);
      expect(item.duePk, where).toMatch(new RegExp(`^DUE#${rule.due}#\\d+$`));
      expect(Number(item.duePk.split("#").pop()), where).toBeLessThan(DUE_SHARDS);
    } else {
      expect(item.duePk, where).toBeUndefined();
      expect(item.dueSk, where).toBeUndefined();
    }
  }
  return records;
}

const statusesOf = (records: Record<string, any>[], kind: string) =>
  records
    .filter((item) => item.sk.startsWith(`${kind}#`))
    .map((item) => item.status)
    .sort();

beforeAll(async () => {
  env = await createTestEnv();
  user = await env.user();
});

describe("index attributes derived from the record", () => {
  it("hold after every kind of invoice, estimate and schedule write", async () => {
    const client = await newClient(user);
    const other = await newClient(user, { name: "Other", email: "other@acme.test" });
    const now = env.clock.now.getTime();
    const dueDate = iso(now + 10 * DAY);

    // Invoices: draft; moved to another client; finalized; sent; partly paid; paid; reopened by
    // deleting a payment; voided (through an idempotent request, so the read-then-write path).
    const draft = await newInvoice(user, { clientId: client.id });
    ok(await user.call("PATCH", `/invoices/${draft.id}`, { clientId: other.id }));
    const sent = await newInvoice(user, { clientId: client.id, dueDate });
    ok(await user.call("POST", `/invoices/${sent.id}/finalize`));
    ok(await user.call("POST", `/invoices/${sent.id}/send`));
    const paid = await newInvoice(user, { clientId: client.id, dueDate, lineItems: [line({ unitPrice: "100.00" })] });
    ok(await user.call("POST", `/invoices/${paid.id}/finalize`));
    ok(await user.call("POST", `/invoices/${paid.id}/send`));
    const payment = { amount: "40.00", paymentMethod: "cash" };
    const first = ok(await user.call("POST", `/invoices/${paid.id}/payments`, payment), 201).body;
    ok(await user.call("POST", `/invoices/${paid.id}/mark-paid`, { paymentMethod: "cash" }));
    const reopened = await newInvoice(user, { clientId: client.id, dueDate });
    ok(await user.call("POST", `/invoices/${reopened.id}/finalize`));
    ok(await user.call("POST", `/invoices/${reopened.id}/send`));
    ok(await user.call("POST", `/invoices/${reopened.id}/mark-paid`, { paymentMethod: "cash" }));
    const [{ id: reopenedPayment }] = ok(await user.call("GET", `/invoices/${reopened.id}/payments`)).body;
    ok(await user.call("DELETE", `/invoices/${reopened.id}/payments/${reopenedPayment}`), 204);
    const voided = await newInvoice(user, { clientId: client.id, dueDate });
    ok(await user.call("POST", `/invoices/${voided.id}/finalize`));
    ok(await user.call("POST", `/invoices/${voided.id}/send`));
    ok(await user.call("POST", `/invoices/${voided.id}/void`, undefined, { "Idempotency-Key": "void-1" }));
    expect(first.id).toBe(1);

    // Estimates: sent with a validUntil, moved later by PATCH; sent without one; accepted; converted.
    const validUntil = iso(now + 5 * DAY);
    const newEstimate = async (body: Record<string, unknown> = {}) =>
      ok(await user.call("POST", "/estimates", { clientId: client.id, lineItems: [line()], ...body }), 201).body;
    const waiting = await newEstimate({ validUntil });
    ok(await user.call("POST", `/estimates/${waiting.id}/send`));
    ok(await user.call("PATCH", `/estimates/${waiting.id}`, { validUntil: iso(now + 7 * DAY) }));
    const open = await newEstimate();
    ok(await user.call("POST", `/estimates/${open.id}/send`));
    const accepted = await newEstimate({ validUntil });
    ok(await user.call("POST", `/estimates/${accepted.id}/send`));
    ok(await user.call("POST", `/estimates/${accepted.id}/accept`));
    const converted = await newEstimate({ validUntil });
    ok(await user.call("POST", `/estimates/${converted.id}/send`));
    ok(await user.call("POST", `/estimates/${converted.id}/convert`), 201);

    // Schedules: active (on the due list), paused (off it).
    const schedule = { clientId: client.id, frequency: "monthly", startDate: iso(now + 3 * DAY), lineItems: [line()] };
    ok(await user.call("POST", "/recurring-schedules", schedule), 201);
    const paused = ok(await user.call("POST", "/recurring-schedules", schedule), 201).body;
    ok(await user.call("POST", `/recurring-schedules/${paused.id}/pause`));

    let records = await expectIndexesFollowState();
    expect(statusesOf(records, "INVOICE")).toEqual(["draft", "draft", "paid", "sent", "sent", "void"]);
    expect(statusesOf(records, "ESTIMATE")).toEqual(["accepted", "converted", "sent", "sent"]);
    expect(statusesOf(records, "SCHEDULE")).toEqual(["active", "paused"]);

    // The jobs' transitions: the sent invoices become overdue, the estimate with a validUntil expires.
    env.clock.advance(11 * DAY);
    await jobs.overdue!(env.deps, env.clock.now);
    await jobs["expire-estimates"]!(env.deps, env.clock.now);
    records = await expectIndexesFollowState();
    expect(statusesOf(records, "INVOICE")).toEqual(["draft", "draft", "overdue", "overdue", "paid", "void"]);
    expect(statusesOf(records, "ESTIMATE")).toEqual(["accepted", "converted", "expired", "sent"]);
  });

  it("transition() refuses to put a record on a due list: that needs the whole record (putIfVersion)", async () => {
    const ctx = { ...env.deps, userId: user.userId };
    await expect(
      transition(ctx, {
        kind: "INVOICE",
        id: 1,
        from: ["finalized"],
        to: "sent",
        notFound: () => new Error("not found"),
        invalid: () => new Error("invalid"),
      }),
    ).rejects.toThrow(/due list/);
  });
});
