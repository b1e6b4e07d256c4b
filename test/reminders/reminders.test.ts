import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import PostalMime from "postal-mime";
import { beforeAll, describe, expect, it } from "vitest";
import { jobs } from "@invoicing/core/jobs/all";
import { addDays } from "@invoicing/core/time";
import { createTestEnvWithClient, expectProblem, request, type TestEnv, type TestUser } from "../support/env";

let env: TestEnv;
let alice: TestUser;
let clientId: number;

const SEND_TIME = "2026-11-22T09:30:00.000Z";
const line = { description: "Consulting", quantity: "10", unitPrice: "150.00", taxRate: "0.10" };

beforeAll(async () => {
  const globex = { name: "Globex", email: "ap@globex.test", paymentTermsDays: 30 };
  ({ env, user: alice, clientId } = await createTestEnvWithClient(globex, { now: SEND_TIME }));
});

/** A sent invoice with the given dueDate, sent at the env clock's time. */
async function sendInvoice(user: TestUser, dueDate: string, to?: string) {
  const created = await user.call("POST", "/invoices", { clientId, dueDate, lineItems: [line] });
  expect(created.status).toBe(201);
  expect((await user.call("POST", `/invoices/${created.body.id}/finalize`)).status).toBe(200);
  const sent = await user.call("POST", `/invoices/${created.body.id}/send`, to ? { to } : undefined);
  expect(sent.status).toBe(200);
  return sent.body;
}

const runReminders = (now: string) => jobs.reminders!(env.deps, new Date(now));

/** The reminder emails in the env's outbox about this invoice (its public link names it), in order. */
async function remindersOf(invoice: { publicToken: string }) {
  const files = readdirSync(env.outboxDir)
    .filter((f) => f.endsWith(".eml"))
    .sort();
  const mails = await Promise.all(files.map((f) => PostalMime.parse(readFileSync(join(env.outboxDir, f), "utf8"))));
  return mails.filter((m) => m.text?.includes(invoice.publicToken) && /^(Reminder|Overdue):/.test(m.subject ?? ""));
}

describe("reminder schedule", () => {
  it("is empty before send and has five reminders at exact day offsets from dueDate after", async () => {
    const due = "2026-12-22T09:30:00.000Z";
    const created = await alice.call("POST", "/invoices", { clientId, dueDate: due, lineItems: [line] });
    const id = created.body.id;
    const empty = await alice.call("GET", `/invoices/${id}/reminders`);
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual([]);
    await alice.call("POST", `/invoices/${id}/finalize`);
    expect((await alice.call("GET", `/invoices/${id}/reminders`)).body).toEqual([]);
    await alice.call("POST", `/invoices/${id}/send`);

    const reminders = await alice.call("GET", `/invoices/${id}/reminders`);
    expect(reminders.status).toBe(200);
    expect(reminders.body).toEqual([
      { scheduledAt: "2026-12-19T09:30:00.000Z", kind: "before_due", status: "scheduled", sentAt: null },
      { scheduledAt: "2026-12-22T09:30:00.000Z", kind: "on_due", status: "scheduled", sentAt: null },
      { scheduledAt: "2026-12-29T09:30:00.000Z", kind: "after_due", status: "scheduled", sentAt: null },
      { scheduledAt: "2027-01-05T09:30:00.000Z", kind: "after_due", status: "scheduled", sentAt: null },
      { scheduledAt: "2027-01-21T09:30:00.000Z", kind: "after_due", status: "scheduled", sentAt: null },
    ]);
  });

  it("keeps only the reminders later than the send", async () => {
    // Due in one day: the reminder three days before would be in the past.
    const soon = await sendInvoice(alice, addDays(SEND_TIME, 1));
    const kinds = (await alice.call("GET", `/invoices/${soon.id}/reminders`)).body.map((r: { kind: string }) => r.kind);
    expect(kinds).toEqual(["on_due", "after_due", "after_due", "after_due"]);
    // Due ten days ago: only +14 and +30 are still ahead.
    const late = await sendInvoice(alice, addDays(SEND_TIME, -10));
    const times = (await alice.call("GET", `/invoices/${late.id}/reminders`)).body.map(
      (r: { scheduledAt: string }) => r.scheduledAt,
    );
    expect(times).toEqual([addDays(SEND_TIME, 4), addDays(SEND_TIME, 20)]);
    // Due exactly 7 days ago: "later than the send", strictly — the +7 one is not kept.
    const edge = await sendInvoice(alice, addDays(SEND_TIME, -7));
    expect((await alice.call("GET", `/invoices/${edge.id}/reminders`)).body).toHaveLength(2);
  });

  it("answers 404 for an unknown or another user's invoice and 400 for a bad id, and needs a key", async () => {
    const mine = await sendInvoice(alice, addDays(SEND_TIME, 20));
    const bob = await env.user();
    expectProblem(await bob.call("GET", `/invoices/${mine.id}/reminders`), 404, "not_found");
    expectProblem(await alice.call("GET", "/invoices/999999/reminders"), 404, "not_found");
    expectProblem(await alice.call("GET", "/invoices/abc/reminders"), 400, "validation_error");
    expectProblem(await request(env.app, "GET", `/invoices/${mine.id}/reminders`), 401, "unauthorized");
    expectProblem(await alice.call("POST", `/invoices/${mine.id}/reminders`), 405, "method_not_allowed");
  });
});

describe("the reminders job", () => {
  it("at successive times sends each reminder once, to the send's recipient, with amount due and link", async () => {
    const user = await env.user();
    const due = "2027-03-10T00:00:00.000Z";
    const cid = (await user.call("POST", "/clients", { name: "Initech", email: "client@initech.test" })).body.id;
    const created = await user.call("POST", "/invoices", { clientId: cid, dueDate: due, lineItems: [line] });
    await user.call("POST", `/invoices/${created.body.id}/finalize`);
    const invoice = (await user.call("POST", `/invoices/${created.body.id}/send`, { to: "payables@initech.test" }))
      .body;
    const number: string = invoice.invoiceNumber;

    const steps: [string, number][] = [
      [addDays(due, -4), 0], // nothing due yet
      [addDays(due, -3), 1], // before_due, exactly at its time
      [addDays(due, -3), 0], // the same run again: nothing
      [due, 1], // on_due
      [addDays(due, 7), 1], // the first after_due, exactly a week later
      [addDays(due, 7), 0],
      [addDays(due, 40), 2], // +14 and +30
      [addDays(due, 90), 0],
    ];
    for (const [now, expected] of steps) {
      const result = await runReminders(now);
      expect(result.job).toBe("reminders");
      expect(result.now).toBe(now);
      expect(result.sent, `sent at ${now}`).toBeGreaterThanOrEqual(expected);
      const mine = (await user.call("GET", `/invoices/${invoice.id}/reminders`)).body;
      expect(mine.filter((r: { sentAt: string | null }) => r.sentAt !== null && r.sentAt <= now)).toHaveLength(
        steps.filter(([t]) => t <= now).reduce((n, [, e]) => n + e, 0),
      );
    }

    const reminders = (await user.call("GET", `/invoices/${invoice.id}/reminders`)).body;
    expect(reminders.map((r: { status: string }) => r.status)).toEqual(["sent", "sent", "sent", "sent", "sent"]);
    expect(reminders.map((r: { sentAt: string }) => r.sentAt)).toEqual([
      addDays(due, -3),
      due,
      addDays(due, 7),
      addDays(due, 40),
      addDays(due, 40),
    ]);

    const reminderMails = await remindersOf(invoice);
    expect(reminderMails).toHaveLength(5);
    for (const mail of reminderMails) {
      expect(mail.to?.[0]?.address).toBe("payables@initech.test");
      expect(mail.text).toContain("Amount due: USD 1,650.00");
      expect(mail.text).toContain(`http://localhost:3000/public/invoices/${invoice.publicToken}`);
    }
    expect(reminderMails.map((m) => m.subject)).toEqual([
      `Reminder: invoice ${number} is due on 10 Mar 2027`,
      `Reminder: invoice ${number} is due today`,
      `Overdue: invoice ${number} was due on 10 Mar 2027`,
      `Overdue: invoice ${number} was due on 10 Mar 2027`,
      `Overdue: invoice ${number} was due on 10 Mar 2027`,
    ]);
  });

  it("sends each reminder once when runs overlap", async () => {
    const user = await env.user();
    const due = "2027-05-01T00:00:00.000Z";
    const cid = (await user.call("POST", "/clients", { name: "Hooli", email: "ap@hooli.test" })).body.id;
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) {
      const inv = await user.call("POST", "/invoices", { clientId: cid, dueDate: due, lineItems: [line] });
      await user.call("POST", `/invoices/${inv.body.id}/finalize`);
      await user.call("POST", `/invoices/${inv.body.id}/send`);
      ids.push(inv.body.id);
    }
    const now = addDays(due, 1); // before_due and on_due of each: 6 reminders
    const runs = await Promise.all([1, 2, 3, 4].map(() => runReminders(now)));
    const lists = await Promise.all(ids.map((id) => user.call("GET", `/invoices/${id}/reminders`)));
    const sentHere = lists.flatMap((l) => l.body).filter((r: { status: string }) => r.status === "sent");
    expect(sentHere).toHaveLength(6);
    // Other invoices of this file may be due too; ours account for exactly 6 sends across the runs.
    expect(runs.reduce((n, r) => n + (r.sent as number), 0)).toBeGreaterThanOrEqual(6);
    for (const id of ids) {
      const invoice = (await user.call("GET", `/invoices/${id}`)).body;
      expect(await remindersOf(invoice)).toHaveLength(2);
    }
  });

  it("never reads a user's email-quota item, and counts every reminder it queues there", async () => {
    const user = await env.user();
    const due = "2027-06-01T00:00:00.000Z";
    const cid = (await user.call("POST", "/clients", { name: "Initech", email: "ap@initech.test" })).body.id;
    for (let i = 0; i < 3; i++) {
      const inv = await user.call("POST", "/invoices", { clientId: cid, dueDate: due, lineItems: [line] });
      await user.call("POST", `/invoices/${inv.body.id}/finalize`);
      await user.call("POST", `/invoices/${inv.body.id}/send`);
    }
    const quotaKey = { pk: `USER#${user.userId}`, sk: "EMAILQUOTA" };
    const quota = async () => {
      const out = await env.deps.db.doc.send(new GetCommand({ TableName: env.deps.db.table, Key: quotaKey }));
      return out.Item as { hours: Record<string, number>; used: number };
    };
    expect((await quota()).used).toBe(3); // the three sends

    // Every read of this user's quota item during the run, whatever the command.
    const reads: string[] = [];
    const name = "count-quota-reads";
    env.deps.db.doc.middlewareStack.add(
      (next, context) => async (args) => {
        const { commandName } = context as { commandName?: string };
        if (
          /^(Get|BatchGet|TransactGet)Item/.test(commandName ?? "") &&
          JSON.stringify(args.input).includes("EMAILQUOTA")
        )
          reads.push(commandName!);
        return next(args);
      },
      { step: "build", name },
    );
    const runAt = addDays(due, 1); // before_due and on_due of each: 6 reminders
    try {
      const run = await runReminders(runAt);
      expect(run.sent).toBeGreaterThanOrEqual(6);
    } finally {
      env.deps.db.doc.middlewareStack.remove(name);
    }
    expect(reads).toEqual([]);
    // The run's six are counted in the run's hour; the sends' hour (months before, out of the 24-hour
    // window) stays in the running count until a write that reads the item drops it.
    const after = await quota();
    expect(after.hours[runAt.slice(0, 13).replace(/[-T]/g, "")]).toBe(6);
    expect(after.used).toBe(9);
    expect(Object.values(after.hours).reduce((a, b) => a + b, 0)).toBe(9);
  });

  it("cancels the pending reminders of a paid or void invoice, and keeps the sent ones", async () => {
    const user = await env.user();
    const due = "2027-07-01T00:00:00.000Z";
    const cid = (await user.call("POST", "/clients", { name: "Umbrella", email: "ap@umbrella.test" })).body.id;
    const make = async () => {
      const inv = await user.call("POST", "/invoices", { clientId: cid, dueDate: due, lineItems: [line] });
      await user.call("POST", `/invoices/${inv.body.id}/finalize`);
      return (await user.call("POST", `/invoices/${inv.body.id}/send`)).body;
    };
    const toPay = await make();
    const toVoid = await make();
    await runReminders(addDays(due, -3)); // the before_due of both goes out

    env.clock.set(addDays(due, -2));
    expect(
      (await user.call("POST", `/invoices/${toPay.id}/mark-paid`, { paymentMethod: "bank_transfer" })).status,
    ).toBe(200);
    expect((await user.call("POST", `/invoices/${toVoid.id}/void`)).status).toBe(200);
    env.clock.set(SEND_TIME);

    // The schedule of each: the before_due that went out, the four after it cancelled.
    const statusesOf = async (inv: { id: number }) => {
      const listed = (await user.call("GET", `/invoices/${inv.id}/reminders`)).body;
      expect(listed.map((r: { status: string }) => r.status)).toEqual([
        "sent",
        "cancelled",
        "cancelled",
        "cancelled",
        "cancelled",
      ]);
      return listed;
    };
    for (const inv of [toPay, toVoid]) {
      const listed = await statusesOf(inv);
      expect(listed[0].sentAt).toBe(addDays(due, -3));
      expect(listed.slice(1).every((r: { sentAt: unknown }) => r.sentAt === null)).toBe(true);
    }

    const result = await runReminders(addDays(due, 60));
    expect(result.cancelled).toBeGreaterThanOrEqual(8);
    for (const inv of [toPay, toVoid]) {
      expect(await remindersOf(inv)).toHaveLength(1);
      await statusesOf(inv);
    }
    // Nothing is left on the due list: a later run changes nothing of theirs.
    const again = await runReminders(addDays(due, 61));
    expect(again.changed).toBe(0);
  });
});
