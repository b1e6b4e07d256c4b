import { toClient, type ClientItem } from "../clients/clients";
import { toCreditNote } from "../credit-notes/read";
import type { CreditNoteItem } from "../credit-notes/model";
import { toEstimate, type EstimateItem } from "../estimates/model";
import { toInvoice, type InvoiceItem } from "../invoices/model";
import { centsOf } from "../money/money";
import { toPayment, type PaymentItem } from "../payments/model";
import { toSchedule, type ScheduleItem } from "../schedules/model";
import { toWebhookEndpoint, type WebhookEndpointItem } from "../webhooks/endpoints";
import type { DerivedEvent, EventType, ResourceType } from "../events/types";

export type { DerivedEvent } from "../events/types";
import type { StreamChange } from "../db/dynamodb";

/**
 * From one change of one table item (its images before and after, as the stream gives them) to the
 * events it means. Pure: the stream subscriber feeds it, and unit tests feed it hand-made images.
 *
 * Which items count is decided by the sort key alone, so a new kind of record is ignored until it is
 * named here: counters, idempotency records, the email outbox, API keys, reminders, webhook
 * attempts and events themselves never make events. A webhook endpoint makes one only when the
 * service disables it after days of failures (`webhook_endpoint.disabled`, webhooks/deliveries.ts):
 * its owner's own changes tell them nothing new.
 *
 * The type: an insert is `.created`, a removal `.deleted` (with the item before it); a change of
 * status is that action's type (finalized, sent, paid, …); a change that keeps the status is
 * `.updated` when the record's version moved (PATCH), or nothing when only bookkeeping changed (a
 * client's reference count, a due-list entry, a checkout session id). Money on invoices: more paid
 * without reaching paid is `invoice.partially_paid`; less paid (a payment deleted or refunded) is
 * `invoice.updated`, whatever the status becomes; more credited (a credit note) is `invoice.voided`
 * or `invoice.paid` when it changed the status, else `invoice.credited`. A credit note's insert is
 * `credit_note.created`, its send `credit_note.sent`.
 */
export type { StreamChange } from "../db/dynamodb";

type Item = Record<string, unknown>;

interface Kind {
  resourceType: ResourceType;
  id: number;
}

/** The resource an item is, from its key; undefined for every internal record. */
export function kindOf(pk: unknown, sk: unknown): Kind | undefined {
  if (typeof pk !== "string" || !pk.startsWith("USER#") || typeof sk !== "string") return undefined;
  // Payments: PAYMENT#<invoice id>#<payment id> (payments/model.ts), ids counted per invoice.
  const payment = /^PAYMENT#\d+#(\d+)$/.exec(sk);
  if (payment) return { resourceType: "payment", id: Number(payment[1]) };
  const match = /^(CLIENT|INVOICE|ESTIMATE|SCHEDULE|CREDITNOTE|WEBHOOK_ENDPOINT)#(\d+)$/.exec(sk);
  if (!match) return undefined;
  const [, kind, id] = match;
  const types = {
    CLIENT: "client",
    INVOICE: "invoice",
    ESTIMATE: "estimate",
    SCHEDULE: "recurring_schedule",
    CREDITNOTE: "credit_note",
    WEBHOOK_ENDPOINT: "webhook_endpoint",
  } as const;
  return { resourceType: types[kind as keyof typeof types], id: Number(id) };
}

/** The public shape of each resource (the same functions the API answers with). */
const publicShape: Record<ResourceType, (item: Item) => Record<string, unknown>> = {
  client: (item) => ({ ...toClient(item as unknown as ClientItem) }),
  invoice: (item) => ({ ...toInvoice(item as unknown as InvoiceItem) }),
  estimate: (item) => ({ ...toEstimate(item as unknown as EstimateItem) }),
  recurring_schedule: (item) => ({ ...toSchedule(item as unknown as ScheduleItem) }),
  credit_note: (item) => ({ ...toCreditNote(item as unknown as CreditNoteItem) }),
  // The public endpoint: never its secrets.
  webhook_endpoint: (item) => ({ ...toWebhookEndpoint(item as unknown as WebhookEndpointItem) }),
  payment: (item) => ({ ...toPayment(item as unknown as PaymentItem) }),
};

const STATUS_TYPES: Partial<Record<ResourceType, Record<string, EventType>>> = {
  invoice: {
    finalized: "invoice.finalized",
    sent: "invoice.sent",
    paid: "invoice.paid",
    overdue: "invoice.overdue",
    void: "invoice.voided",
  },
  estimate: {
    sent: "estimate.sent",
    accepted: "estimate.accepted",
    declined: "estimate.declined",
    expired: "estimate.expired",
    converted: "estimate.converted",
  },
  recurring_schedule: {
    paused: "recurring_schedule.paused",
    active: "recurring_schedule.resumed",
    cancelled: "recurring_schedule.cancelled",
    completed: "recurring_schedule.completed",
  },
};

export function deriveEvents(change: StreamChange, before: Item | undefined, after: Item | undefined): DerivedEvent[] {
  const image = after ?? before;
  if (!image) return [];
  const kind = kindOf(image.pk, image.sk);
  if (!kind) return [];
  const type = eventType(kind.resourceType, change, before, after);
  if (!type) return [];
  const shown = change === "REMOVE" ? before! : after!;
  return [
    {
      userId: String(image.pk).slice("USER#".length),
      type,
      resourceType: kind.resourceType,
      resourceId: kind.id,
      data: publicShape[kind.resourceType](shown),
    },
  ];
}

function eventType(
  resource: ResourceType,
  change: StreamChange,
  before: Item | undefined,
  after: Item | undefined,
): EventType | undefined {
  if (resource === "webhook_endpoint")
    return change === "MODIFY" &&
      before?.enabled === true &&
      after?.enabled === false &&
      after.disabledBy === "failures"
      ? "webhook_endpoint.disabled"
      : undefined;
  if (change === "INSERT") return `${resource}.created` as EventType;
  if (change === "REMOVE") return `${resource}.deleted` as EventType;
  if (!before || !after) return undefined;
  if (resource === "payment") return paymentChange(before, after);
  // A credit note never changes after its issue but by a send (sentAt; bookkeeping makes none).
  if (resource === "credit_note") return before.sentAt !== after.sentAt ? "credit_note.sent" : undefined;
  if (resource === "invoice") {
    const paid = compareMoney(before.amountPaid, after.amountPaid);
    if (paid < 0) return "invoice.updated"; // a payment undone: whatever the status went back to
    if (paid > 0 && after.status !== "paid") return "invoice.partially_paid";
    // A credit note: voided or paid when it changed the status (below), else credited.
    const credited = compareMoney(before.creditedAmount, after.creditedAmount);
    if (credited > 0 && before.status === after.status) return "invoice.credited";
  }
  if (before.status !== after.status && typeof after.status === "string") {
    return STATUS_TYPES[resource]?.[after.status] ?? (`${resource}.updated` as EventType);
  }
  return before.version !== after.version ? (`${resource}.updated` as EventType) : undefined;
}

/** A payment changes after its creation only by a refund (more refunded); bookkeeping makes none. */
function paymentChange(before: Item, after: Item): EventType | undefined {
  if (compareMoney(before.refundedAmount, after.refundedAmount) > 0) return "payment.refunded";
  if (before.status !== after.status && after.status === "refunded") return "payment.refunded";
  return undefined;
}

/** Sign of after − before for two stored money strings (absent = 0). */
function compareMoney(before: unknown, after: unknown): number {
  const b = typeof before === "string" ? centsOf(before) : 0n;
  const a = typeof after === "string" ? centsOf(after) : 0n;
  return a > b ? 1 : a < b ? -1 : 0;
}
