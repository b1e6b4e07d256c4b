import { beforeAll, describe, expect, it } from "vitest";
import { commit } from "@invoicing/core/db/commit";
import {
  EmailQuotaExceeded,
  EmailQuotaRaced,
  EmailQuotaUndecided,
  reserveEmails,
  reserveFrom,
  reserveWithoutReading,
} from "@invoicing/core/email/quota";
import { jobs } from "@invoicing/core/jobs/all";
import { cardProcessor } from "@invoicing/functions/capabilities/card-processor";
import { createDeps } from "@invoicing/functions/capabilities/create-deps";
import { line, newClient, newInvoice, ok } from "../invoices/fixtures";
import { partition } from "../reliability/harness";
import { createTestEnv, expectProblem, type TestEnv, type TestUser } from "../support/env";

/**
 * The per-user email quota (email/quota.ts), here 3 in any 24 hours: `send` past it is a 429 with
 * Retry-After that changes nothing; a reminder due past it stays scheduled and goes out once the
 * window allows.
 */
let env: TestEnv;

beforeAll(async () => {
  env = await createTestEnv({ extraDeps: { emailDailyQuota: 3 } });
});

async function finalized(user: TestUser, clientId: number, body: Record<string, unknown> = {}) {
  const invoice = await newInvoice(user, { clientId, ...body });
  return ok(await user.call("POST", `/invoices/${invoice.id}/finalize`)).body as { id: number };
}

describe("email quota", () => {
  it("EMAIL_DAILY_QUOTA configures it; anything but a positive integer is refused at start", () => {
    const base = { TABLE_NAME: "t", DYNAMODB_ENDPOINT: env.endpoint, AWS_REGION: "local" };
    expect(createDeps(base, [cardProcessor]).emailDailyQuota).toBeUndefined(); // the default, 200
    expect(createDeps({ ...base, EMAIL_DAILY_QUOTA: "3" }, [cardProcessor]).emailDailyQuota).toBe(3);
    expect(() => createDeps({ ...base, EMAIL_DAILY_QUOTA: "0" }, [cardProcessor])).toThrow(/EMAIL_DAILY_QUOTA/);
    expect(() => createDeps({ ...base, EMAIL_DAILY_QUOTA: "lots" }, [cardProcessor])).toThrow(/EMAIL_DAILY_QUOTA/);
  });

  it("the 4th send in 24 hours (invoice or estimate) is a 429 with Retry-After, and nothing changes", async () => {
    env.clock.set("2026-11-22T09:30:00.000Z");
    const alice = await env.user();
    const { id: clientId } = await newClient(alice);
    const invoices = [
      await finalized(alice, clientId),
      await finalized(alice, clientId),
      await finalized(alice, clientId),
    ];
    const estimate = ok(await alice.call("POST", "/estimates", { clientId, lineItems: [line()] }), 201).body;
    ok(await alice.call("POST", `/invoices/${invoices[0]!.id}/send`));
    ok(await alice.call("POST", `/invoices/${invoices[1]!.id}/send`));
    env.clock.set("2026-11-22T20:00:00.000Z");
    ok(await alice.call("POST", `/estimates/${estimate.id}/send`));
    const before = await partition(env.deps.db, alice.userId);
    expect(before.filter((item) => String(item.sk).startsWith("OUTBOX#"))).toHaveLength(3);

    const refused = await alice.call("POST", `/invoices/${invoices[2]!.id}/send`, { to: "x@example.test" });
    const problem = expectProblem(refused, 429, "email_quota_exceeded");
    // The oldest emails (09:30) leave the window at 09:30 the next day: 13.5 hours from 20:00.
    expect(refused.headers.get("retry-after")).toBe(String(13.5 * 3600));
    expect(problem.detail).toMatch(/3 emails/);
    const after = ok(await alice.call("GET", `/invoices/${invoices[2]!.id}`)).body;
    expect(after).toMatchObject({ status: "finalized", sentAt: null });
    expect((await alice.call("GET", `/invoices/${invoices[2]!.id}/reminders`)).body).toEqual([]);
    // Nothing at all changed: no email queued, no quota counted, no reminder, the invoice as it was.
    expect(await partition(env.deps.db, alice.userId)).toEqual(before);
    const estimate2 = ok(await alice.call("POST", "/estimates", { clientId, lineItems: [line()] }), 201).body;
    expectProblem(await alice.call("POST", `/estimates/${estimate2.id}/send`), 429, "email_quota_exceeded");

    // Another user has a quota of their own.
    const bob = await env.user();
    const bobs = await finalized(bob, (await newClient(bob)).id);
    ok(await alice.call("GET", "/invoices")); // (alice is not locked out of anything else)
    ok(await bob.call("POST", `/invoices/${bobs.id}/send`));

    // Once the two 09:xx emails left the window, two places are free again — and no more.
    env.clock.set("2026-11-23T10:00:00.000Z");
    ok(await alice.call("POST", `/invoices/${invoices[2]!.id}/send`));
    ok(await alice.call("POST", `/estimates/${estimate2.id}/send`));
    const fourth = await finalized(alice, clientId);
    const refusedAgain = expectProblem(
      await alice.call("POST", `/invoices/${fourth.id}/send`),
      429,
      "email_quota_exceeded",
    );
    expect(refusedAgain.status).toBe(429);
  });

  it("Retry-After is when a place frees: never more than 24 hours, and a send then goes through", async () => {
    const frank = await env.user();
    const { id: clientId } = await newClient(frank);
    const invoices: { id: number }[] = [];
    for (let i = 0; i < 5; i++) invoices.push(await finalized(frank, clientId));
    const send = (i: number) => frank.call("POST", `/invoices/${invoices[i]!.id}/send`);
    for (const [i, at] of ["09:59:00", "09:59:10", "09:59:20"].entries()) {
      env.clock.set(`2026-11-22T${at}.000Z`);
      ok(await send(i));
    }
    const retryAfter = async (at: string) => {
      env.clock.set(at);
      const refused = await send(3);
      expectProblem(refused, 429, "email_quota_exceeded");
      return Number(refused.headers.get("retry-after"));
    };
    // The hour's emails leave the window together, 24 hours after the last of them (09:59:20).
    expect(await retryAfter("2026-11-22T09:59:30.000Z")).toBe(86_400 - 10);
    expect(await retryAfter("2026-11-22T10:00:30.000Z")).toBe(86_400 - 70);
    expect(await retryAfter("2026-11-23T09:59:19.000Z")).toBe(1);
    env.clock.set("2026-11-23T09:59:20.000Z");
    ok(await send(3));
    ok(await send(4));
  });

  it("concurrent sends cannot share the last places: exactly the quota goes out", async () => {
    env.clock.set("2026-11-22T09:30:00.000Z");
    const carol = await env.user();
    const { id: clientId } = await newClient(carol);
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await finalized(carol, clientId)).id);
    const results = await Promise.all(ids.map((id) => carol.call("POST", `/invoices/${id}/send`)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    // What went out, not only what was answered: three emails queued, each for a sent invoice.
    const items = await partition(env.deps.db, carol.userId);
    const queued = items.filter((item) => String(item.sk).startsWith("OUTBOX#"));
    expect(queued).toHaveLength(3);
    const sent = ids.filter((_, i) => results[i]!.status === 200);
    const invoices = await Promise.all(ids.map(async (id) => (await carol.call("GET", `/invoices/${id}`)).body));
    expect(invoices.filter((i) => i.status === "sent").map((i) => i.id)).toEqual(sent);
  });

  it("a reminder due over the quota stays scheduled and goes out once the window allows", async () => {
    env.clock.set("2026-11-22T09:30:00.000Z");
    const dave = await env.user();
    const { id: clientId } = await newClient(dave);
    // Due tomorrow at 00:00: its one remaining reminder (on the due date) is due then.
    const reminded = await finalized(dave, clientId, { dueDate: "2026-11-23" });
    ok(await dave.call("POST", `/invoices/${reminded.id}/send`));
    for (const other of [await finalized(dave, clientId), await finalized(dave, clientId)]) {
      ok(await dave.call("POST", `/invoices/${other.id}/send`));
    }
    const reminders = () =>
      dave
        .call("GET", `/invoices/${reminded.id}/reminders`)
        .then((r) => ok(r).body as { status: string; sentAt: string | null }[]);
    expect((await reminders()).map((r) => r.status)).toEqual(["scheduled", "scheduled", "scheduled", "scheduled"]);

    const early = await jobs.reminders!(env.deps, new Date("2026-11-23T01:00:00.000Z"));
    expect(early).toMatchObject({ sent: 0, waitingForQuota: 1 });
    expect((await reminders())[0]).toMatchObject({ status: "scheduled", sentAt: null });

    const later = await jobs.reminders!(env.deps, new Date("2026-11-23T10:00:00.000Z"));
    expect(later).toMatchObject({ sent: 1, waitingForQuota: 0 });
    expect((await reminders())[0]).toMatchObject({ status: "sent", sentAt: "2026-11-23T10:00:00.000Z" });
  });

  it("an auto-send recurring invoice over the quota stays finalized and due; a later run sends it", async () => {
    env.clock.set("2027-01-01T00:00:00.000Z");
    const erin = await env.user();
    const { id: clientId } = await newClient(erin);
    for (const invoice of [
      await finalized(erin, clientId),
      await finalized(erin, clientId),
      await finalized(erin, clientId),
    ]) {
      ok(await erin.call("POST", `/invoices/${invoice.id}/send`));
    }
    const schedule = ok(
      await erin.call("POST", "/recurring-schedules", {
        clientId,
        frequency: "monthly",
        startDate: "2027-01-01T12:00:00Z",
        autoSend: true,
        lineItems: [line()],
      }),
      201,
    ).body;
    const generatedBy = async () =>
      (
        ok(await erin.call("GET", "/invoices?limit=200")).body as {
          recurringScheduleId: number | null;
          status: string;
          sentAt: string | null;
        }[]
      ).filter((i) => i.recurringScheduleId === schedule.id);

    const first = await jobs.recurring!(env.deps, new Date("2027-01-01T12:00:00.000Z"));
    // (The run may meet the new invoice twice: once generating it, once on the due list it put it on.)
    expect(first).toMatchObject({ generated: 1, sent: 0 });
    expect(first.waitingForQuota).toBeGreaterThanOrEqual(1);
    expect((await generatedBy()).map((i) => i.status)).toEqual(["finalized"]);
    // Re-keyed on its due list to when the quota allows (issue 37): a run before then neither sends
    // it nor reads it again.
    const stillWaiting = await jobs.recurring!(env.deps, new Date("2027-01-01T23:00:00.000Z"));
    expect(stillWaiting).toMatchObject({ generated: 0, sent: 0, waitingForQuota: 0 });
    expect((await generatedBy()).map((i) => i.status)).toEqual(["finalized"]);

    const later = await jobs.recurring!(env.deps, new Date("2027-01-02T01:00:00.000Z"));
    expect(later).toMatchObject({ generated: 0, sent: 1, recovered: 1 });
    expect(await generatedBy()).toMatchObject([{ status: "sent", sentAt: "2027-01-02T01:00:00.000Z" }]);
  });

  it("the reminders job racing sends cannot exceed the quota, and loses or doubles no reminder", async () => {
    const gina = await env.user();
    const { id: clientId } = await newClient(gina);
    // Three invoices sent on Dec 1 (the quota's three places that day), due Dec 4: on Dec 4 each has
    // its on-due reminder due.
    env.clock.set("2026-12-01T09:00:00.000Z");
    const reminded: number[] = [];
    for (let i = 0; i < 3; i++) {
      const { id } = await finalized(gina, clientId, { dueDate: "2026-12-04" });
      ok(await gina.call("POST", `/invoices/${id}/send`));
      reminded.push(id);
    }
    // One place taken on Dec 4 at 11:00; two left at noon, and five emails want them.
    env.clock.set("2026-12-04T11:00:00.000Z");
    ok(await gina.call("POST", `/invoices/${(await finalized(gina, clientId, { dueDate: "2027-06-01" })).id}/send`));
    const others = [
      await finalized(gina, clientId, { dueDate: "2027-06-01" }),
      await finalized(gina, clientId, { dueDate: "2027-06-01" }),
    ];
    env.clock.set("2026-12-04T12:00:00.000Z");
    const noon = new Date("2026-12-04T12:00:00.000Z");
    const [, , ...sends] = await Promise.all([
      jobs.reminders!(env.deps, noon),
      jobs.reminders!(env.deps, noon),
      ...others.map((invoice) => gina.call("POST", `/invoices/${invoice.id}/send`)),
    ]);
    expect(sends.every((r) => r.status === 200 || r.status === 429)).toBe(true);

    const reminderState = async () => {
      const items = await partition(env.deps.db, gina.userId);
      const onDue = items.filter(
        (item) => String(item.sk).startsWith("REMINDER#") && String(item.scheduledAt).startsWith("2026-12-04"),
      );
      const outboxIds = new Set(items.filter((item) => item.type === "outbox").map((item) => item.id));
      return { items, onDue, outboxIds };
    };
    const { items, onDue, outboxIds } = await reminderState();
    expect(onDue).toHaveLength(3);
    const sentNow = onDue.filter((r) => r.status === "sent");
    expect(onDue.every((r) => r.status === "sent" || r.status === "scheduled")).toBe(true);
    // Exactly the two places went out at noon, whoever took them; each sent reminder has its own email.
    const sendsOk = sends.filter((r) => r.status === 200).length;
    expect(sentNow.length + sendsOk).toBe(2);
    const queuedAtNoon = items.filter((item) => item.type === "outbox" && item.createdAt === noon.toISOString());
    expect(queuedAtNoon).toHaveLength(2);
    expect(new Set(sentNow.map((r) => r.outboxId)).size).toBe(sentNow.length);
    for (const r of sentNow) expect(outboxIds.has(r.outboxId)).toBe(true);

    // A day later the window is empty again: the reminders left waiting go out, each once.
    await jobs.reminders!(env.deps, new Date("2026-12-05T12:00:00.000Z"));
    const later = await reminderState();
    expect(later.onDue.map((r) => r.status)).toEqual(["sent", "sent", "sent"]);
    expect(new Set(later.onDue.map((r) => r.outboxId)).size).toBe(3);
    for (const r of later.onDue) expect(later.outboxIds.has(r.outboxId)).toBe(true);
    const reminderEmails = later.items.filter(
      (item) => item.type === "outbox" && later.onDue.some((r) => r.outboxId === item.id),
    );
    expect(reminderEmails).toHaveLength(3);
  });

  it("counting without a read moves the version on, and leaves to the item what its running count cannot decide", async () => {
    const { userId } = await env.user();
    const deps = env.deps;
    const at = "2026-12-10T10:00:00.000Z";
    const counted = (write: Parameters<typeof commit>[1][number]) => commit(deps, [write]);
    const undecided = (when: string) =>
      counted(reserveWithoutReading(deps, userId, when)).then(
        () => expect.fail("counted without deciding from the item"),
        (error: unknown) => {
          expect(error).toBeInstanceOf(EmailQuotaUndecided);
          return (error as EmailQuotaUndecided).item;
        },
      );

    const version = async () =>
      (await partition(deps.db, userId)).find((item) => item.sk === "EMAILQUOTA")?.version as number | undefined;
    // No item yet: nothing to count on; the failed write says there is none.
    expect(await undecided(at)).toBeUndefined();
    await counted(reserveFrom(deps, userId, undefined, at));
    expect(await version()).toBe(1);
    await counted(reserveWithoutReading(deps, userId, at));
    // Counted without a read, the version moves on all the same (so a write from an earlier read fails).
    expect(await version()).toBe(2);
    // A send decided from its read (two used, a place left); the job counts the last place without
    // reading: the send's write must fail (it would be a fourth email), and reads again.
    const sendsWrite = await reserveEmails(deps, userId, at);
    await counted(reserveWithoutReading(deps, userId, at));
    await expect(counted(sendsWrite)).rejects.toBeInstanceOf(EmailQuotaRaced);
    // Full: the running count defers to the item, whose window is full too.
    const full = await undecided(at);
    expect(full).toMatchObject({ used: 3, hours: { "2026121010": 3 } });
    expect(() => reserveFrom(deps, userId, full, at)).toThrow(EmailQuotaExceeded);

    // A day later those three left the window but still make the running count: the item decides,
    // drops them, and counting without a read works again from the exact count.
    const nextDay = "2026-12-11T10:00:00.000Z";
    const stale = await undecided(nextDay);
    await counted(reserveFrom(deps, userId, stale, nextDay));
    await counted(reserveWithoutReading(deps, userId, nextDay));
    // As of an earlier time than the item's last email (a late run): the item decides.
    const item = await undecided("2026-12-11T09:00:00.000Z");
    expect(item).toMatchObject({ used: 2, hours: { "2026121110": 2 } });
    expect(Object.keys(item!.hours)).toEqual(["2026121110"]);
  });
});
