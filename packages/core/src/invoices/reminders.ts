import type { Ctx } from "../deps";
import type { Write } from "../db/commit";
import { dueKeys } from "../db/keys";
import { allUserItems } from "../db/user-items";
import { DomainError } from "../errors";
import { getInvoice } from "./invoices";
import type { InvoiceItem } from "./model";
import {
  reminderKey,
  reminderPrefix,
  reminderTimes,
  toReminder,
  type Reminder,
  type ReminderItem,
} from "./reminder-model";

/**
 * The reminder writes of a send, for the send's own transaction: the reminders exist if and only
 * if the invoice became sent. `invoice` is the invoice as sent (sentAt and dueDate set).
 */
export function scheduleReminderWrites(ctx: Pick<Ctx, "db" | "userId">, invoice: InvoiceItem): Write[] {
  if (!invoice.dueDate || !invoice.sentAt) return [];
  return reminderTimes(invoice.dueDate, invoice.sentAt).map(({ scheduledAt, kind }) => {
    const key = reminderKey(ctx.userId, invoice.id, scheduledAt);
    const item: ReminderItem = {
      ...key,
      ...dueKeys("reminders", ctx.userId, key.sk, scheduledAt),
      type: "reminder",
      userId: ctx.userId,
      invoiceId: invoice.id,
      scheduledAt,
      kind,
      status: "scheduled",
      sentAt: null,
      createdAt: invoice.sentAt!,
    };
    return {
      op: { Put: { TableName: ctx.db.table, Item: item, ConditionExpression: "attribute_not_exists(pk)" } },
      // An invoice is sent once (the send is conditioned on `finalized`), so this cannot happen.
      onConditionFailed: () => new DomainError("invalid_transition", `invoice ${invoice.id} already has its reminders`),
    };
  });
}

/** GET /invoices/{id}/reminders: every reminder of the invoice by time, cancelled ones included. */
export async function listInvoiceReminders(ctx: Ctx, invoiceId: number): Promise<Reminder[]> {
  const invoice = await getInvoice(ctx, invoiceId);
  const items = await allUserItems<ReminderItem>(ctx.db, ctx.userId, reminderPrefix(invoiceId));
  return items.map((item) => toReminder(item, invoice.status));
}
