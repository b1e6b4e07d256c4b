import { createHash } from "node:crypto";
import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import type { Ctx } from "@invoicing/core/deps";
import { DUE_SHARDS, entityKey } from "@invoicing/core/db/keys";
import { attachMeter } from "../support/metering";
import { createInvoice } from "@invoicing/core/invoices/invoices";
import { finalizeInvoice, sendInvoice } from "@invoicing/core/invoices/lifecycle";
import { jobs } from "@invoicing/core/jobs/all";
import { createTestEnv, type TestEnv, type TestUser } from "../support/env";
import { line, newClient, newInvoice, ok } from "./fixtures";

/**
 * The `overdue` job: a sent invoice whose dueDate is earlier than now
 * becomes overdue, exactly once, and the job's reads grow with the invoices due, not with the
 * table. Reads are counted with an SDK middleware on the real client (test/support/metering.ts): the items
 * every Query scanned, every GetItem and BatchGetItem returned.
 */

let env: TestEnv;
const DAY = 86_400_000;
const NOT_DUE = 200;
const now = () => env.clock.now.getTime();
const iso = (ms: number) => new Date(ms).toISOString();

/** Sent invoices due at `dueDate`, made through the core use cases (the same calls the API makes). */
async function sentInvoices(ctx: Ctx, clientId: number, dueDates: string[]): Promise<number[]> {
  const ids: number[] = [];
  for (const dueDate of dueDates) {
    const { id } = await createInvoice(ctx, { clientId, dueDate, lineItems: [line()] });
    await finalizeInvoice(ctx, id);
    await sendInvoice(ctx, id, { to: "payer@example.test" });
    ids.push(id);
  }
  return ids;
}

let alice: TestUser;
let dueNow: number[];
let dueLater: number[];
const notDueByUser: { user: TestUser; ids: number[] }[] = [];

beforeAll(async () => {
  env = await createTestEnv();
  // 200 sent invoices due 10 to 30 days from now, spread over 8 users (and so over the shards),
  // made in parallel per user.
  await Promise.all(
    Array.from({ length: 8 }, async (_, u) => {
      const user = await env.user();
      const client = await newClient(user);
      const dates = Array.from({ length: NOT_DUE / 8 }, (_, i) => iso(now() + (10 + ((u * 25 + i) % 20)) * DAY));
      notDueByUser.push({ user, ids: await sentInvoices({ ...env.deps, userId: user.userId }, client.id, dates) });
    }),
  );
  alice = await env.user();
  const client = await newClient(alice);
  const ctx = { ...env.deps, userId: alice.userId };
  // Five due an hour to four days ago; five more due in two days.
  dueNow = await sentInvoices(
    ctx,
    client.id,
    [1, 2, 3, 4, 5].map((h) => iso(now() - h * 20 * 3_600_000)),
  );
  dueLater = await sentInvoices(
    ctx,
    client.id,
    [1, 2, 3, 4, 5].map((m) => iso(now() + 2 * DAY + m * 60_000)),
  );
  // Invoices past due that are not sent: the job must neither read nor change them.
  const pastDue = iso(now() - 3 * DAY);
  await newInvoice(alice, { clientId: client.id, dueDate: pastDue });
  const finalized = await newInvoice(alice, { clientId: client.id, dueDate: pastDue });
  ok(await alice.call("POST", `/invoices/${finalized.id}/finalize`));
  for (const end of ["mark-paid", "void"]) {
    const inv = await newInvoice(alice, { clientId: client.id, dueDate: pastDue });
    ok(await alice.call("POST", `/invoices/${inv.id}/finalize`));
    ok(await alice.call("POST", `/invoices/${inv.id}/send`, { to: "payer@example.test" }));
    ok(
      await alice.call(
        "POST",
        `/invoices/${inv.id}/${end}`,
        end === "mark-paid" ? { paymentMethod: "cash" } : undefined,
      ),
    );
  }
}, 600_000);

async function statuses(user: TestUser, ids: number[]): Promise<string[]> {
  const out: string[] = [];
  for (const id of ids) out.push(ok(await user.call("GET", `/invoices/${id}`)).body.status);
  return out;
}

/** One run of the job at the clock's time, with the table reads it made counted. */
async function meteredOverdueRun() {
  const meter = attachMeter(env.deps.db.doc);
  try {
    return { result: await jobs.overdue!(env.deps, env.clock.now), meter };
  } finally {
    meter.detach();
  }
}

describe("overdue job", () => {
  it("reads only what is due: 5 of 200+ sent invoices", async () => {
    const byStatusBefore = ok(await alice.call("GET", "/invoices")).body.map(
      (i: { id: number; status: string }) => `${i.id}:${i.status}`,
    );
    const { result, meter } = await meteredOverdueRun();
    expect(result.changed).toBe(dueNow.length);
    // One Query per shard finds the due items; each is then one conditional UpdateItem.
    expect(meter.itemsRead).toBeGreaterThanOrEqual(dueNow.length);
    expect(meter.itemsRead).toBeLessThanOrEqual(dueNow.length + DUE_SHARDS);
    expect(meter.calls).toBeLessThanOrEqual(2 * dueNow.length + DUE_SHARDS + 2);
    expect(meter.byCommand.ScanCommand ?? 0).toBe(0);

    expect(await statuses(alice, dueNow)).toEqual(dueNow.map(() => "overdue"));
    expect(await statuses(alice, dueLater)).toEqual(dueLater.map(() => "sent"));
    for (const { user, ids } of notDueByUser.slice(0, 2))
      expect(await statuses(user, ids)).toEqual(ids.map(() => "sent"));
    const overdue = ok(await alice.call("GET", `/invoices/${dueNow[0]}`)).body;
    expect(overdue.updatedAt).toBe(env.clock.now.toISOString());
    // Everything else of alice's is as it was.
    const byStatusAfter = ok(await alice.call("GET", "/invoices")).body.map(
      (i: { id: number; status: string }) => `${i.id}:${i.status}`,
    );
    expect(byStatusAfter.filter((s: string) => !byStatusBefore.includes(s))).toEqual(
      [...dueNow].reverse().map((id) => `${id}:overdue`),
    );
  });

  it("a second run finds nothing and reads nothing but its empty queries", async () => {
    const { result, meter } = await meteredOverdueRun();
    expect(result.changed).toBe(0);
    expect(meter.itemsRead).toBe(0);
    expect(meter.calls).toBeLessThanOrEqual(DUE_SHARDS);
  });

  it("three concurrent runs flip each newly due invoice exactly once", async () => {
    const before = [];
    for (const id of dueLater) before.push(ok(await alice.call("GET", `/invoices/${id}`)).headers.get("etag"));
    const later = new Date(now() + 3 * DAY);
    const results = await Promise.all([1, 2, 3].map(() => jobs.overdue!(env.deps, later)));
    expect(results.reduce((sum, r) => sum + r.changed, 0)).toBe(dueLater.length);
    for (const [i, id] of dueLater.entries()) {
      const res = ok(await alice.call("GET", `/invoices/${id}`));
      expect(res.body).toMatchObject({ status: "overdue", updatedAt: later.toISOString() });
      // One change per invoice: one new version, whatever the number of runs.
      expect(Number(JSON.parse(res.headers.get("etag")!))).toBe(Number(JSON.parse(before[i]!)) + 1);
    }
    expect(await statuses(alice, dueNow)).toEqual(dueNow.map(() => "overdue"));
    for (const { user, ids } of notDueByUser.slice(0, 2))
      expect(await statuses(user, ids)).toEqual(ids.map(() => "sent"));
  });

  it("an overdue invoice can still be paid or voided, and leaves the job's list", async () => {
    ok(await alice.call("POST", `/invoices/${dueNow[0]}/mark-paid`, { paymentMethod: "bank_transfer" }));
    ok(await alice.call("POST", `/invoices/${dueNow[1]}/void`));
    const result = await jobs.overdue!(env.deps, new Date(now() + 4 * DAY));
    expect(result.changed).toBe(0);
    expect(await statuses(alice, dueNow.slice(0, 2))).toEqual(["paid", "void"]);
  });

  it("finds an entry written when there were 4 shards (the count only grows: docs/data-model.md)", async () => {
    // An invoice sent before DUE_SHARDS grew from 4 sits in shard hash mod 4: put its entry there,
    // as that code wrote it, and the job (reading every shard) must still find and handle it.
    const OLD_SHARDS = 4;
    const user = await env.user();
    const client = await newClient(user);
    const ctx = { ...env.deps, userId: user.userId };
    const dueAt = iso(now() + 5 * DAY - 3_600_000);
    let moved: { id: number; from: string; to: string } | undefined;
    const sent: number[] = [];
    for (let i = 0; i < 20 && !moved; i++) {
      const [id] = await sentInvoices(ctx, client.id, [dueAt]);
      sent.push(id!);
      const key = entityKey(user.userId, "INVOICE", id!);
      const item = (await env.deps.db.doc.send(new GetCommand({ TableName: env.deps.db.table, Key: key }))).Item!;
      // Spelled as that code wrote it, not through today's keys.ts.
      const old = `DUE#overdue#${createHash("sha1").update(`${user.userId}#${key.sk}`).digest()[0]! % OLD_SHARDS}`;
      if (old === item.duePk) continue; // the same partition either way: try another invoice
      await env.deps.db.doc.send(
        new UpdateCommand({
          TableName: env.deps.db.table,
          Key: key,
          UpdateExpression: "SET duePk = :old",
          ExpressionAttributeValues: { ":old": old },
        }),
      );
      moved = { id: id!, from: String(item.duePk), to: old };
    }
    expect(moved, "an invoice whose shard differs under 4 and under DUE_SHARDS").toBeDefined();
    const result = await jobs.overdue!(env.deps, new Date(now() + 5 * DAY));
    // The moved one and any made before it (whose entry sat in the same partition either way).
    expect(result.changed).toBe(sent.length);
    expect(await statuses(user, sent)).toEqual(sent.map(() => "overdue"));
    const after = await env.deps.db.doc.send(
      new GetCommand({ TableName: env.deps.db.table, Key: entityKey(user.userId, "INVOICE", moved!.id) }),
    );
    expect(after.Item!.duePk).toBeUndefined();
  });
});
