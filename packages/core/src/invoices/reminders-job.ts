import type { Deps } from "../deps";
import { commit, type Write } from "../db/commit";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { isDueEntry, movedOnDueList, OFF_DUE_LIST } from "../db/keys";
import { dispatchDue, dispatchFields } from "../queue/dispatch";
import { dueWorker } from "../queue/due-worker";
import { optimistic, Raced } from "../db/optimistic";
import { queueEmail, sweepOutbox } from "../email/outbox";
import {
  EmailQuotaExceeded,
  EmailQuotaRaced,
  EmailQuotaUndecided,
  reserveFrom,
  reserveWithoutReading,
  type QuotaItem,
} from "../email/quota";
import { reminderEmail } from "./emails";
import { findInvoice } from "./invoices";
import { invoiceKey, type InvoiceItem } from "./model";
import type { JobOptions, JobResult } from "../job";
import { effectiveStatus, reminderKey, type ReminderItem } from "./reminder-model";

/**
 * The `reminders` job: every scheduled reminder whose time is at or before `now` is emailed once
 * (sentAt = now), or cancelled when its invoice is paid or void by now. The run dispatches the
 * reminders due list to the `reminders` queue (queue/dispatch.ts, users in turns) and then sweeps the
 * email outbox (email/outbox.ts: its own queue), delivering whatever a request or an earlier run
 * left undelivered; deployed, neither waits for the workers, so the sweep never waits behind a
 * backlog of reminders.
 *
 * Exactly once: the reminder's move scheduled → sent is a conditional write, in ONE transaction
 * with the email's outbox record and a check that the invoice is still unpaid. A repeated or
 * concurrent run, or a message given twice, finds the reminder no longer scheduled (or off the due
 * list) and does nothing; the outbox then delivers that one email at most once (see email/outbox.ts).
 */
export async function runRemindersJob(deps: Deps, now: Date, options: JobOptions = {}): Promise<JobResult> {
  const nowIso = now.toISOString();
  const run = await dispatchDue(deps, {
    job: "reminders",
    queue: "reminders",
    now: nowIso,
    worker: remindersWorker,
    deadline: options.deadline,
  });
  // waitingForQuota: due, but the user's email quota is used up; each moved to when it allows.
  const { sent = 0, cancelled = 0, skipped = 0, waitingForQuota = 0 } = run.tally;
  const outbox = await sweepOutbox(deps, nowIso, options);
  return {
    job: "reminders",
    now: nowIso,
    changed: sent + cancelled,
    sent,
    cancelled,
    skipped,
    waitingForQuota,
    emailsDelivered: outbox.delivered,
    emailsFailed: outbox.failed,
    // Left `sending` by a deliverer that died mid-send: marked failed, not sent again (email/outbox.ts).
    emailsReclaimed: outbox.reclaimed,
    ...dispatchFields(deps, run),
  };
}

/**
 * The `reminders` queue's worker: reads each reminder (consistent) and, while it is scheduled and
 * its time has come, sends or cancels it. The quotas found full are kept for the batch (below).
 */
export const remindersWorker = dueWorker<KnownQuotas>(
  "reminders",
  async (deps, key, message, quotas) => {
    const out = await deps.db.doc.send(new GetCommand({ TableName: deps.db.table, Key: key, ConsistentRead: true }));
    const reminder = out.Item as ReminderItem | undefined;
    if (!reminder || reminder.status !== "scheduled" || !isDueEntry("reminders", reminder, message.now))
      return "skipped";
    return handleReminder(deps, quotas, reminder, message.now);
  },
  () => new Map(),
);

/**
 * The job never reads a user's email-quota item: each reminder's transaction counts its email with
 * reserveWithoutReading, conditioned on the item's running count (email/quota.ts). Only when that
 * count cannot decide does the failed transaction hand back the item (ALL_OLD, no read), kept here:
 * that user's next attempt decides from it exactly (reserveFrom, conditioned on its version). A user
 * found over the quota stays here for the rest of the run, so their later reminders wait without a
 * write (nothing frees a place before the run's `now`); once a write decided from the item commits,
 * the running count is exact again and the user's next reminders count without it.
 */
type KnownQuotas = Map<string, QuotaItem | undefined>;

class AlreadyHandled extends Error {}
class InvoiceSettled extends Error {}

type Outcome = "sent" | "cancelled" | "skipped" | "waitingForQuota";

async function handleReminder(deps: Deps, quotas: KnownQuotas, reminder: ReminderItem, now: string): Promise<Outcome> {
  const invoice = await findInvoice({ ...deps, userId: reminder.userId }, reminder.invoiceId, true);
  const to = invoice?.recipient ?? invoice?.clientEmail;
  if (!invoice || !to || effectiveStatus(reminder, invoice.status) === "cancelled") return cancel(deps, reminder, now);
  try {
    // The quota's running count could not decide, or a request counted an email meanwhile: again.
    return await optimistic("email quota", () => send(deps, quotas, reminder, invoice, to, now));
  } catch (error) {
    if (error instanceof AlreadyHandled) return "skipped";
    if (error instanceof InvoiceSettled) return cancel(deps, reminder, now); // paid or voided meanwhile
    // Over the quota: nothing was sent; the reminder moves on its due list to when the quota allows,
    // so no run reads it again before then (a later run sends it).
    if (error instanceof EmailQuotaExceeded) return waitForQuota(deps, reminder, now, error.retryAfterSeconds);
    throw error;
  }
}

async function send(
  deps: Deps,
  quotas: KnownQuotas,
  reminder: ReminderItem,
  invoice: InvoiceItem,
  to: string,
  now: string,
): Promise<"sent"> {
  const { userId } = reminder;
  const quota = quotas.has(userId)
    ? reserveFrom(deps, userId, quotas.get(userId), now) // throws EmailQuotaExceeded when full
    : reserveWithoutReading(deps, userId, now);
  const email = queueEmail(deps, reminder.userId, reminderEmail(deps, invoice, now, to), now);
  try {
    await commit({ db: deps.db }, [
      whileScheduled(deps, reminder, `SET #status = :sent, sentAt = :now, outboxId = :outbox REMOVE ${OFF_DUE_LIST}`, {
        ":sent": "sent",
        ":now": now,
        ":outbox": email.item.id,
      }),
      {
        op: {
          ConditionCheck: {
            TableName: deps.db.table,
            Key: invoiceKey(reminder.userId, reminder.invoiceId),
            ConditionExpression: "#status IN (:sent, :overdue)",
            ExpressionAttributeNames: { "#status": "status" },
            ExpressionAttributeValues: { ":sent": "sent", ":overdue": "overdue" },
          },
        },
        onConditionFailed: () => new InvoiceSettled(),
      },
      email.write,
      quota, // counted with the email it queues (email/quota.ts)
    ]);
  } catch (error) {
    // Nothing was written: the reminder is still scheduled, and the next round decides again.
    if (error instanceof EmailQuotaUndecided) quotas.set(userId, error.item);
    // A request counted an email between the failed write and this one: count without the item again.
    else if (error instanceof EmailQuotaRaced) quotas.delete(userId);
    else throw error;
    throw new Raced();
  }
  quotas.delete(userId); // the running count is exact again (reserveFrom wrote it) or was enough
  // Delivered by the stream subscriber on the outbox record's insert; the sweep above retries.
  return "sent";
}

/**
 * Moves a reminder that waits for its user's email quota to the time the quota frees a place
 * (Retry-After from `now`, the job's time the quota was decided at): conditional on it still being
 * scheduled where it was read, so a concurrent send or cancel wins.
 */
async function waitForQuota(
  deps: Deps,
  reminder: ReminderItem,
  now: string,
  retryAfterSeconds = 3600,
): Promise<"waitingForQuota" | "skipped"> {
  const at = new Date(Date.parse(now) + retryAfterSeconds * 1000).toISOString();
  const { sk } = reminderKey(reminder.userId, reminder.invoiceId, reminder.scheduledAt);
  const move = movedOnDueList("reminders", reminder.userId, sk, at, reminder);
  return unlessHandled(
    deps,
    whileScheduled(deps, reminder, `SET ${move.set}`, move.values, move.condition),
    "waitingForQuota",
  );
}

/** Records the cancellation the rule in model.ts already implies; a no-op if another run did. */
function cancel(deps: Deps, reminder: ReminderItem, now: string): Promise<"cancelled" | "skipped"> {
  const update = `SET #status = :cancelled, cancelledAt = :now REMOVE ${OFF_DUE_LIST}`;
  return unlessHandled(
    deps,
    whileScheduled(deps, reminder, update, { ":cancelled": "cancelled", ":now": now }),
    "cancelled",
  );
}

/**
 * A write of a reminder that holds only while it is still scheduled (and `also`, when given): else
 * AlreadyHandled — another run sent, cancelled or moved it. Each of the reminder's changes is one.
 */
function whileScheduled(
  deps: Deps,
  reminder: ReminderItem,
  update: string,
  values: Record<string, unknown>,
  also?: string,
): Write {
  return {
    op: {
      Update: {
        TableName: deps.db.table,
        Key: reminderKey(reminder.userId, reminder.invoiceId, reminder.scheduledAt),
        UpdateExpression: update,
        ConditionExpression: also ? `#status = :scheduled AND ${also}` : "#status = :scheduled",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ":scheduled": "scheduled", ...values },
      },
    },
    onConditionFailed: () => new AlreadyHandled(),
  };
}

/** The reminder's write alone: `done`, or "skipped" when it was no longer scheduled. */
async function unlessHandled<T extends string>(deps: Deps, write: Write, done: T): Promise<T | "skipped"> {
  try {
    await commit({ db: deps.db }, [write]);
    return done;
  } catch (error) {
    if (error instanceof AlreadyHandled) return "skipped";
    throw error;
  }
}
