import { describe, expect, it } from "vitest";
import type { Deps } from "@invoicing/core/deps";
import { createDb } from "@invoicing/core/db/dynamodb";
import { commit } from "@invoicing/core/db/commit";
import { nextId } from "@invoicing/core/db/ids";
import { jobs } from "@invoicing/core/jobs/all";
import { requireClient } from "@invoicing/core/clients/clients";
import { advanceWrites, buildOccurrence } from "@invoicing/core/schedules/occurrences";
import { findSchedule } from "@invoicing/core/schedules/schedules";
import { createTestEnv, type TestEnv, type TestUser } from "../support/env";

/**
 * The `recurring` job against DynamoDB Local. Every test has its own table, so
 * a run sees exactly the schedules the test made, and invoice counts are exact.
 */
const line = { description: "Retainer", unitPrice: "100.00" };
const recurring = (deps: Deps, now: string) => jobs.recurring!(deps, new Date(now));

async function world(
  now: string,
  client: Record<string, unknown> = { name: "Acme", email: "billing@acme.test", paymentTermsDays: 10 },
) {
  const env = await createTestEnv({ now });
  const user = await env.user();
  const clientId = (await user.call("POST", "/clients", client)).body.id as number;
  const schedule = async (body: Record<string, unknown>) => {
    const res = await user.call("POST", "/recurring-schedules", {
      clientId,
      frequency: "monthly",
      lineItems: [line],
      ...body,
    });
    if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
    return res.body as { id: number; [field: string]: unknown };
  };
  return { env, user, clientId, schedule };
}

async function invoicesOf(user: TestUser, scheduleId: number): Promise<any[]> {
  const res = await user.call("GET", "/invoices?limit=200");
  expect(res.status).toBe(200);
  return (res.body as { id: number; recurringScheduleId: number | null }[])
    .filter((inv) => inv.recurringScheduleId === scheduleId)
    .sort((a, b) => a.id - b.id);
}

const get = async (user: TestUser, id: number) => (await user.call("GET", `/recurring-schedules/${id}`)).body;

describe("month-end anchoring (the issue's acceptance example)", () => {
  it("monthly from Jan 31: invoices dated Jan 31, Feb 28, Mar 31, Apr 30 — each on its own run", async () => {
    const { env, user, schedule } = await world("2027-01-31T08:00:00.000Z");
    const s = await schedule({ startDate: "2027-01-31" });
    for (const now of ["2027-02-28T00:00:00.000Z", "2027-03-31T00:00:00.000Z", "2027-04-30T00:00:00.000Z"]) {
      const run = await recurring(env.deps, now);
      expect(run).toMatchObject({ job: "recurring", now, changed: 1, generated: 1 });
    }
    const invoices = await invoicesOf(user, s.id);
    expect(invoices.map((i) => i.issueDate)).toEqual([
      "2027-01-31T00:00:00.000Z",
      "2027-02-28T00:00:00.000Z",
      "2027-03-31T00:00:00.000Z",
      "2027-04-30T00:00:00.000Z",
    ]);
    expect(invoices.map((i) => i.dueDate)).toEqual([
      "2027-02-10T00:00:00.000Z",
      "2027-03-10T00:00:00.000Z",
      "2027-04-10T00:00:00.000Z",
      "2027-05-10T00:00:00.000Z",
    ]);
    // The invoice is dated at its occurrence, not at the run; it was created by the run.
    expect(invoices[2]).toMatchObject({
      status: "draft",
      createdAt: "2027-03-31T00:00:00.000Z",
      recurringScheduleId: s.id,
      total: "100.00",
    });
    expect(await get(user, s.id)).toMatchObject({
      occurrencesGenerated: 4,
      lastRunAt: "2027-04-30T00:00:00.000Z",
      lastInvoiceId: invoices[3].id,
      nextRunAt: "2027-05-31T00:00:00.000Z",
    });
  });

  it("in a leap year: Jan 31, Feb 29, Mar 31, Apr 30", async () => {
    const { env, user, schedule } = await world("2028-01-31T00:00:00.000Z");
    const s = await schedule({ startDate: "2028-01-31" });
    await recurring(env.deps, "2028-05-01T00:00:00.000Z");
    expect((await invoicesOf(user, s.id)).map((i) => i.issueDate.slice(0, 10))).toEqual([
      "2028-01-31",
      "2028-02-29",
      "2028-03-31",
      "2028-04-30",
    ]);
  });

  it("an occurrence is due at its exact time (≤ now), not before", async () => {
    const { env, user, schedule } = await world("2027-01-31T08:00:00.000Z");
    const s = await schedule({ startDate: "2027-01-31T09:15:00Z", frequency: "daily" });
    expect((await recurring(env.deps, "2027-01-31T09:14:59.999Z")).changed).toBe(0);
    expect((await recurring(env.deps, "2027-01-31T09:15:00.000Z")).changed).toBe(1);
    expect((await invoicesOf(user, s.id)).map((i) => i.issueDate)).toEqual(["2027-01-31T09:15:00.000Z"]);
  });
});

describe("catch-up after downtime", () => {
  it("a run months late generates every missed occurrence, in order, each dated at its occurrence", async () => {
    const { env, user, schedule } = await world("2027-01-31T08:00:00.000Z");
    const s = await schedule({ startDate: "2027-01-31T10:00:00Z" }); // later today: nothing at creation
    expect(s.occurrencesGenerated).toBe(0);
    const run = await recurring(env.deps, "2027-06-15T00:00:00.000Z");
    expect(run).toMatchObject({ changed: 5, generated: 5 });
    const invoices = await invoicesOf(user, s.id);
    expect(invoices.map((i) => i.issueDate)).toEqual([
      "2027-01-31T10:00:00.000Z",
      "2027-02-28T10:00:00.000Z",
      "2027-03-31T10:00:00.000Z",
      "2027-04-30T10:00:00.000Z",
      "2027-05-31T10:00:00.000Z",
    ]);
    expect(await get(user, s.id)).toMatchObject({ occurrencesGenerated: 5, nextRunAt: "2027-06-30T10:00:00.000Z" });
    // A repeated run at the same now finds nothing to do.
    expect((await recurring(env.deps, "2027-06-15T00:00:00.000Z")).changed).toBe(0);
    expect(await invoicesOf(user, s.id)).toHaveLength(5);
  });
});

describe("exactly once under concurrency", () => {
  it("five concurrent runs at the same now produce each occurrence once", async () => {
    const { env, user, schedule } = await world("2026-12-31T00:00:00.000Z");
    const start = "2026-12-31T01:00:00Z";
    const daily = await schedule({ frequency: "daily", startDate: start });
    const weekly = await schedule({ frequency: "weekly", startDate: start, autoSend: true });
    const monthly = await schedule({ frequency: "monthly", startDate: start });
    const now = "2027-02-10T00:00:00.000Z";
    const runs = await Promise.all(Array.from({ length: 5 }, () => recurring(env.deps, now)));

    // Dec 31 … Feb 9 (41 days); Dec 31 … Feb 4 (6 weeks); Dec 31, Jan 31.
    const expected = new Map([
      [daily.id, 41],
      [weekly.id, 6],
      [monthly.id, 2],
    ]);
    for (const [id, count] of expected) {
      const invoices = await invoicesOf(user, id);
      const dates = invoices.map((i) => i.issueDate);
      expect(dates).toHaveLength(count);
      expect(new Set(dates).size).toBe(count); // no occurrence twice
      expect([...dates].sort()).toEqual(dates); // generated in order
      expect((await get(user, id)).occurrencesGenerated).toBe(count);
    }
    expect(runs.reduce((sum, r) => sum + (r.generated as number), 0)).toBe(41 + 6 + 2);
    // Auto-send: each weekly invoice finalized and sent once, with distinct numbers.
    const sent = await invoicesOf(user, weekly.id);
    expect(sent.every((i) => i.status === "sent")).toBe(true);
    expect(new Set(sent.map((i) => i.invoiceNumber)).size).toBe(6);
    expect(runs.reduce((sum, r) => sum + (r.sent as number), 0)).toBe(6);
    expect((await recurring(env.deps, now)).changed).toBe(0);
  }, 180_000);
});

describe("completion", () => {
  it("maxOccurrences: the run that generates the last one completes the schedule", async () => {
    const { env, user, schedule } = await world("2027-01-01T00:00:00.000Z");
    const s = await schedule({ frequency: "weekly", startDate: "2027-01-01", maxOccurrences: 3 });
    const run = await recurring(env.deps, "2027-03-01T00:00:00.000Z");
    expect(run).toMatchObject({ generated: 2, completed: 1 });
    expect(await get(user, s.id)).toMatchObject({
      status: "completed",
      occurrencesGenerated: 3,
      nextRunAt: null,
      lastRunAt: "2027-01-15T00:00:00.000Z",
    });
    expect(await invoicesOf(user, s.id)).toHaveLength(3);
  });

  it("endDate: an occurrence exactly at endDate is included, the next is not", async () => {
    const { env, user, schedule } = await world("2027-01-01T00:00:00.000Z");
    const s = await schedule({ frequency: "daily", startDate: "2027-01-01", endDate: "2027-01-03" });
    await recurring(env.deps, "2027-01-02T12:00:00.000Z");
    expect(await get(user, s.id)).toMatchObject({ status: "active", nextRunAt: "2027-01-03T00:00:00.000Z" });
    await recurring(env.deps, "2027-02-01T00:00:00.000Z");
    expect((await invoicesOf(user, s.id)).map((i) => i.issueDate.slice(0, 10))).toEqual([
      "2027-01-01",
      "2027-01-02",
      "2027-01-03",
    ]);
    expect(await get(user, s.id)).toMatchObject({ status: "completed", nextRunAt: null, occurrencesGenerated: 3 });
  });

  it("cancelled and paused schedules generate nothing", async () => {
    const { env, user, schedule } = await world("2027-01-01T00:00:00.000Z");
    const a = await schedule({ frequency: "daily", startDate: "2027-01-02" });
    const b = await schedule({ frequency: "daily", startDate: "2027-01-02" });
    await user.call("POST", `/recurring-schedules/${a.id}/cancel`);
    await user.call("POST", `/recurring-schedules/${b.id}/pause`);
    expect((await recurring(env.deps, "2027-02-01T00:00:00.000Z")).changed).toBe(0);
    expect(await invoicesOf(user, a.id)).toEqual([]);
    expect(await invoicesOf(user, b.id)).toEqual([]);
  });
});

describe("autoSend", () => {
  it("finalizes and sends each generated invoice, stamped with the run's now", async () => {
    const { env, user, schedule } = await world("2027-01-01T00:00:00.000Z");
    const s = await schedule({ startDate: "2027-01-02", autoSend: true });
    const run = await recurring(env.deps, "2027-02-05T00:00:00.000Z");
    expect(run).toMatchObject({ generated: 2, sent: 2, finalizedWithoutEmail: 0 });
    const invoices = await invoicesOf(user, s.id);
    expect(invoices.map((i) => [i.status, i.issueDate, i.sentAt])).toEqual([
      ["sent", "2027-01-02T00:00:00.000Z", "2027-02-05T00:00:00.000Z"],
      ["sent", "2027-02-02T00:00:00.000Z", "2027-02-05T00:00:00.000Z"],
    ]);
    // Finalize kept the schedule's dates (not "now", not the client's terms).
    expect(invoices[1].dueDate).toBe("2027-02-12T00:00:00.000Z");
    expect(invoices[0].invoiceNumber < invoices[1].invoiceNumber).toBe(true);
  });

  it("a client without email leaves the invoice finalized, counted in the output, and not retried", async () => {
    const { env, user, schedule } = await world("2027-01-01T00:00:00.000Z", { name: "No Mail" });
    const s = await schedule({ startDate: "2027-01-02", autoSend: true });
    const run = await recurring(env.deps, "2027-01-03T00:00:00.000Z");
    expect(run).toMatchObject({ generated: 1, sent: 0, finalizedWithoutEmail: 1 });
    const [invoice] = await invoicesOf(user, s.id);
    expect(invoice.status).toBe("finalized");
    const again = await recurring(env.deps, "2027-01-04T00:00:00.000Z");
    expect(again).toMatchObject({ changed: 0, finalizedWithoutEmail: 0 });
  });

  it("after a crash between generation and delivery, the next run finishes the delivery", async () => {
    const { env, user, schedule } = await world("2027-01-01T00:00:00.000Z");
    const s = await schedule({ frequency: "monthly", startDate: "2027-01-02", autoSend: true, maxOccurrences: 1 });
    // The generation transaction alone, as a run that died right after it would leave things.
    const ctx = { ...env.deps, clock: () => new Date("2027-01-02T00:00:00.000Z"), userId: user.userId };
    const stored = (await findSchedule(ctx, s.id, true))!;
    const client = await requireClient(ctx, stored.clientId);
    const occurrence = buildOccurrence(
      ctx,
      stored,
      client,
      await nextId(ctx.db, user.userId, "invoice"),
      "2027-01-02T00:00:00.000Z",
    );
    await commit(ctx, advanceWrites(ctx, stored, occurrence));
    expect((await invoicesOf(user, s.id))[0].status).toBe("draft");
    expect(await get(user, s.id)).toMatchObject({ status: "completed" }); // not due any more itself

    const run = await recurring(env.deps, "2027-01-02T00:05:00.000Z");
    expect(run).toMatchObject({ generated: 0, sent: 1, recovered: 1, changed: 1 });
    expect((await invoicesOf(user, s.id))[0]).toMatchObject({ status: "sent", sentAt: "2027-01-02T00:05:00.000Z" });
    expect((await recurring(env.deps, "2027-01-03T00:00:00.000Z")).changed).toBe(0);
  });

  it("a pending delivery whose invoice was voided meanwhile is dropped, not sent", async () => {
    const { env, user, schedule } = await world("2027-01-01T00:00:00.000Z");
    const s = await schedule({ startDate: "2027-01-02", autoSend: true });
    const ctx = { ...env.deps, userId: user.userId };
    const stored = (await findSchedule(ctx, s.id, true))!;
    const occurrence = buildOccurrence(
      ctx,
      stored,
      await requireClient(ctx, stored.clientId),
      await nextId(ctx.db, user.userId, "invoice"),
      "2027-01-02T00:00:00.000Z",
    );
    await commit(ctx, advanceWrites(ctx, stored, occurrence));
    expect((await user.call("POST", `/invoices/${occurrence.invoice.id}/void`)).status).toBe(200);
    const run = await recurring(env.deps, "2027-01-02T01:00:00.000Z");
    expect(run).toMatchObject({ sent: 0, recovered: 0 });
    expect((await user.call("GET", `/invoices/${occurrence.invoice.id}`)).body.status).toBe("void");
  });
});

describe("cost", () => {
  it("reads only the due list and the due schedules: never a scan, never a schedule that is not due", async () => {
    const { env, user, schedule } = await world("2027-01-01T00:00:00.000Z");
    const due = await schedule({ frequency: "daily", startDate: "2027-01-02" });
    const notDue: number[] = [];
    for (let i = 0; i < 4; i++) notDue.push((await schedule({ frequency: "daily", startDate: "2027-03-01" })).id);
    const paused = await schedule({ frequency: "daily", startDate: "2027-01-02" });
    await user.call("POST", `/recurring-schedules/${paused.id}/pause`);

    const calls = spy(env);
    const run = await recurring(calls.deps, "2027-01-03T12:00:00.000Z");
    expect(run.generated).toBe(2);
    const names = new Set(calls.log.map((c) => c.command));
    expect(names.has("ScanCommand")).toBe(false);
    for (const q of calls.log.filter((c) => c.command === "QueryCommand")) expect(q.input.IndexName).toBe("byDue");
    const scheduleReads = calls.log
      .filter((c) => c.command === "GetItemCommand" && String(c.input.Key?.sk).startsWith("SCHEDULE#"))
      .map((c) => Number(String(c.input.Key.sk).split("#")[1]));
    // The worker reads the due schedule once (the due list carries only keys) and continues from
    // what its commits wrote; a schedule that is not due is never read.
    expect(scheduleReads).toEqual([due.id]);
    const dueListItems = calls.log.filter((c) => c.command === "QueryCommand").length;
    expect(dueListItems).toBeGreaterThan(0);
  });
});

/** The env's table through a client that records every command the job sends. */
function spy(env: TestEnv) {
  const db = createDb({ tableName: env.tableName, dynamoEndpoint: env.endpoint, region: "local" });
  // command inputs of every shape
  const log: { command: string; input: any }[] = [];
  db.doc.middlewareStack.add(
    (next, context) => async (args) => {
      log.push({ command: String(context.commandName), input: args.input });
      return next(args);
    },
    { step: "initialize", name: "recurring-job-spy" },
  );
  return { deps: { ...env.deps, db } as Deps, log };
}
