import type { Deps } from "../context";
import { commit } from "../db/commit";
import { dueItems } from "../db/due";
import { optimistic, Raced } from "../db/optimistic";
import { queueEmail, sweepOutbox } from "../email/outbox";
import { EmailQuotaExceeded, EmailQuotaRaced, readEmailQuota, reserveFrom, type QuotaItem } from "../email/quota";
import { reminderEmail } from "../email/templates";
import { findInvoice } from "../invoices/invoices";
import { invoiceKey, type InvoiceItem } from "../invoices/model";
import type { JobResult } from "../jobs/registry";
import { effectiveStatus, reminderKey, type ReminderItem } from "./model";

/**
 * The `reminders` job: every scheduled reminder whose time is at or before `now` is emailed once
 * (sentAt = now), or cancelled when its invoice is paid or void by now. Then it sweeps the email
 * outbox, delivering whatever a request or an earlier run left undelivered.
 *
 * Exactly once: the reminder's move scheduled → sent is a conditional write, in ONE transaction
 * with the email's outbox record and a check that the invoice is still unpaid. A repeated or
 * concurrent run finds the reminder no longer scheduled (or off the due list) and does nothing; the
 * outbox then delivers that one email at most once (see email/outbox.ts).
 */
export async function runRemindersJob(deps: Deps, now: Date): Promise<JobResult> {
  const nowIso = now.toISOString();
  // waitingForQuota: due, but the user's email quota is used up; they stay due for a later run.
  const counts = { sent: 0, cancelled: 0, skipped: 0, waitingForQuota: 0 };
  const quotas: Quotas = new Map();
  for await (const raw of dueItems(deps.db, "reminders", nowIso, { inclusive: true })) {
    const reminder = raw as unknown as ReminderItem;
    const outcome = await handleReminder(deps, quotas, reminder, nowIso);
    counts[outcome]++;
  }
  const outbox = await sweepOutbox(deps, nowIso);
  return {
    job: "reminders",
    now: nowIso,
    changed: counts.sent + counts.cancelled,
    ...counts,
    emailsDelivered: outbox.delivered,
    emailsFailed: outbox.failed,
    // Left `sending` by a deliverer that died mid-send: marked failed, not sent again (email/outbox.ts).
    emailsReclaimed: outbox.reclaimed,
  };
}

/**
 * Each user's email-quota item as this run last read or wrote it (undefined: the user has none), so
 * a user's reminders read it once per run, not once each. Every email's transaction is still
 * conditioned on the version it counts from: should a request have queued an email meanwhile, the
 * commit fails with EmailQuotaRaced and the item is read again.
 */
type Quotas = Map<string, QuotaItem | undefined>;

class AlreadyHandled extends Error {}
class InvoiceSettled extends Error {}

type Outcome = "sent" | "cancelled" | "skipped" | "waitingForQuota";

async function handleReminder(deps: Deps, quotas: Quotas, reminder: ReminderItem, now: string): Promise<Outcome> {
  const invoice = await findInvoice({ ...deps, userId: reminder.userId }, reminder.invoiceId, true);
  const to = invoice?.recipient ?? invoice?.clientEmail;
  if (!invoice || !to || effectiveStatus(reminder, invoice.status) === "cancelled") return cancel(deps, reminder, now);
  try {
    // A request that queued an email of the same user meanwhile: read its quota again and retry.
    return await optimistic("email quota", () => send(deps, quotas, reminder, invoice, to, now));
  } catch (error) {
    if (error instanceof AlreadyHandled) return "skipped";
    if (error instanceof InvoiceSettled) return cancel(deps, reminder, now); // paid or voided meanwhile
    // Over the quota: nothing was written, the reminder stays scheduled and due; a later run sends it.
    if (error instanceof EmailQuotaExceeded) return "waitingForQuota";
    throw error;
  }
}

async function send(
  deps: Deps,
  quotas: Quotas,
  reminder: ReminderItem,
  invoice: InvoiceItem,
  to: string,
  now: string,
): Promise<"sent"> {
  const { userId } = reminder;
  if (!quotas.has(userId)) quotas.set(userId, await readEmailQuota(deps, userId));
  const quota = reserveFrom(deps, userId, quotas.get(userId), now);
  const email = queueEmail(deps, reminder.userId, reminderEmail(deps, invoice, now, to), now);
  try {
    await commit({ db: deps.db }, [
      {
        op: {
          Update: {
            TableName: deps.db.table,
            Key: reminderKey(reminder.userId, reminder.invoiceId, reminder.scheduledAt),
            UpdateExpression: "SET #status = :sent, sentAt = :now, outboxId = :outbox REMOVE duePk, dueSk",
            ConditionExpression: "#status = :scheduled",
            ExpressionAttributeNames: { "#status": "status" },
            ExpressionAttributeValues: {
              ":sent": "sent",
              ":scheduled": "scheduled",
              ":now": now,
              ":outbox": email.item.id,
            },
          },
        },
        onConditionFailed: () => new AlreadyHandled(),
      },
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
      quota.write, // counted with the email it queues (email/quota.ts)
    ]);
  } catch (error) {
    if (!(error instanceof EmailQuotaRaced)) throw error;
    quotas.delete(userId); // changed by a request meanwhile: the next round reads it again
    throw new Raced();
  }
  quotas.set(userId, quota.next);
  // Delivered by the stream subscriber on the outbox record's insert; the sweep above retries.
  return "sent";
}

/** Records the cancellation the rule in model.ts already implies; a no-op if another run did. */
async function cancel(deps: Deps, reminder: ReminderItem, now: string): Promise<"cancelled" | "skipped"> {
  try {
    await commit({ db: deps.db }, [
      {
        op: {
          Update: {
            TableName: deps.db.table,
            Key: reminderKey(reminder.userId, reminder.invoiceId, reminder.scheduledAt),
            UpdateExpression: "SET #status = :cancelled, cancelledAt = :now REMOVE duePk, dueSk",
            ConditionExpression: "#status = :scheduled",
            ExpressionAttributeNames: { "#status": "status" },
            ExpressionAttributeValues: { ":cancelled": "cancelled", ":scheduled": "scheduled", ":now": now },
          },
        },
        onConditionFailed: () => new AlreadyHandled(),
      },
    ]);
    return "cancelled";
  } catch (error) {
    if (error instanceof AlreadyHandled) return "skipped";
    throw error;
  }
}
