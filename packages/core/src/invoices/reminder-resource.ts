import * as v from "valibot";
import { timestampOut } from "../resource";

/** The reminder's response shape, GET /invoices/{id}/reminders (see ../resource.ts). */
export const REMINDER_KINDS = ["before_due", "on_due", "after_due"] as const;
export type ReminderKind = (typeof REMINDER_KINDS)[number];
const REMINDER_STATUSES = ["scheduled", "sent", "cancelled"] as const;
export type ReminderStatus = (typeof REMINDER_STATUSES)[number];

export const Reminder = v.strictObject({
  scheduledAt: timestampOut,
  kind: v.picklist(REMINDER_KINDS),
  status: v.picklist(REMINDER_STATUSES),
  sentAt: v.nullable(timestampOut),
});
export type Reminder = v.InferOutput<typeof Reminder>;
