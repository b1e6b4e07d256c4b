import * as v from "valibot";
import { timestampOut } from "../resource";

/**
 * GET /email-deliveries: one email and what became of it (deliveries.ts), as a response shape (see
 * ../resource.ts). Its status is the outbox's own (outbox.ts), or what SES reported afterwards
 * (bounces.ts): both lists are written here, where the API shows them, and those modules' types
 * come from them.
 */
const OUTBOX_STATUSES = ["pending", "sending", "sent", "failed"] as const;
export type OutboxStatus = (typeof OUTBOX_STATUSES)[number];
const DELIVERY_PROBLEMS = ["bounced", "complained", "rejected"] as const;
export type DeliveryProblem = (typeof DELIVERY_PROBLEMS)[number];

export const EmailDelivery = v.strictObject({
  id: v.string(),
  to: v.string(),
  subject: v.string(),
  status: v.picklist([...OUTBOX_STATUSES, ...DELIVERY_PROBLEMS]),
  createdAt: timestampOut,
  sentAt: v.nullable(timestampOut),
  /** The bounce type ("Permanent/NoEmail"), complaint type, reject reason, or last send error's name. */
  detail: v.nullable(v.string()),
  /** When SES reported the bounce, complaint or reject. */
  reportedAt: v.nullable(timestampOut),
});
export type EmailDelivery = v.InferOutput<typeof EmailDelivery>;
