import { pad, userPk } from "../db/keys";
import { addDays } from "../time";
import type { Reminder, ReminderKind, ReminderStatus } from "./reminder-resource";

/**
 * Payment reminders. Sending an invoice schedules them at fixed day offsets from
 * its dueDate; the `reminders` job emails each once when its time comes. Each reminder is its own
 * item beside the invoice (sk REMINDER#<invoice id>#<scheduledAt>, so one Query lists an invoice's
 * reminders in time order) and, while scheduled, sits on the byDue list "reminders" at its time.
 */
export { REMINDER_KINDS } from "./reminder-resource";
/** The response shape of GET /invoices/{id}/reminders is its schema (./resource.ts). */
export type { Reminder, ReminderKind, ReminderStatus };

export interface ReminderItem extends Reminder {
  pk: string;
  sk: string;
  type: "reminder";
  userId: string;
  invoiceId: number;
  createdAt: string;
  cancelledAt?: string;
  duePk?: string;
  dueSk?: string;
}

/** Days from dueDate: three days before, on the day, then a week, two weeks and a month after. */
const REMINDER_OFFSETS: readonly { days: number; kind: ReminderKind }[] = [
  { days: -3, kind: "before_due" },
  { days: 0, kind: "on_due" },
  { days: 7, kind: "after_due" },
  { days: 14, kind: "after_due" },
  { days: 30, kind: "after_due" },
];

/** The reminders of an invoice sent at `sentAt`: those later than the send, in time order. */
export function reminderTimes(dueDate: string, sentAt: string): { scheduledAt: string; kind: ReminderKind }[] {
  return REMINDER_OFFSETS.map(({ days, kind }) => ({ scheduledAt: addDays(dueDate, days), kind })).filter(
    (r) => r.scheduledAt > sentAt,
  );
}

export const reminderPrefix = (invoiceId: number): string => `REMINDER#${pad(invoiceId)}#`;
export const reminderKey = (userId: string, invoiceId: number, scheduledAt: string) => ({
  pk: userPk(userId),
  sk: `${reminderPrefix(invoiceId)}${scheduledAt}`,
});

/**
 * THE cancellation rule, in one place: paid or void cancels the pending reminders. mark-paid and
 * void stay single conditional writes of the invoice; a still-scheduled reminder of a paid, void
 * (or vanished) invoice IS cancelled — the list shows it so, and the job records it so when it
 * meets it, instead of sending.
 */
const CANCELLING: readonly string[] = ["paid", "void"];

export function effectiveStatus(reminder: Pick<Reminder, "status">, invoiceStatus: string | undefined): ReminderStatus {
  if (reminder.status !== "scheduled") return reminder.status;
  return invoiceStatus === undefined || CANCELLING.includes(invoiceStatus) ? "cancelled" : "scheduled";
}

export function toReminder(item: ReminderItem, invoiceStatus: string | undefined): Reminder {
  return {
    scheduledAt: item.scheduledAt,
    kind: item.kind,
    status: effectiveStatus(item, invoiceStatus),
    sentAt: item.sentAt ?? null,
  };
}
