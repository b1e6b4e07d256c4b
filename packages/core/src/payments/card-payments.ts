import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { Ctx, Deps } from "../context";
import { nowIso } from "../context";
import { commit, type Write } from "../db/commit";
import { pad, userPk } from "../db/keys";
import { DomainError } from "../errors";
import { findInvoice, getInvoice } from "../invoices/invoices";
import { invoiceStatusKeys, type InvoiceItem } from "../invoices/model";
import { centsOf, formatMoney } from "../money/money";
import type { CardProcessorEvent, CheckoutPaidEvent } from "./card-processor";

/**
 * Payments that arrive through the card processor's webhook.
 *
 * Every paid checkout session leaves one CARD_PAYMENT item in its user's partition, keyed by invoice
 * and session and written only if absent. That item is the "exactly once": it goes into the same
 * transaction as the invoice's change to paid, so a webhook delivered twice, retried, or racing
 * another delivery, and the two events Stripe may send for one session (completed, then
 * async_payment_succeeded) change the invoice at most once; the others find the item and answer
 * `duplicate` without writing.
 *
 * Only a sent or overdue invoice moves to paid. Money for any other invoice (void, already paid by
 * other means or by another session, a different amount) is not lost: its item says `needs_refund`
 * with the reason, and GET /invoices/{id}/card-payments lists it for the user to refund in Stripe.
 */
export type CardPaymentStatus = "applied" | "needs_refund";
export type NeedsRefundReason =
  | "invoice_void"
  | "invoice_already_paid"
  | "invoice_not_payable"
  | "invoice_not_found"
  | "amount_mismatch";

export interface CardPayment {
  sessionId: string;
  paymentReference: string;
  amount: string | null;
  currency: string | null;
  status: CardPaymentStatus;
  /** Why the payment was not applied; null when applied. */
  reason: NeedsRefundReason | null;
  /** When the processor reported the payment. */
  paidAt: string;
  /** When we recorded it. */
  recordedAt: string;
  eventId: string;
}

interface CardPaymentItem extends CardPayment {
  pk: string;
  sk: string;
  userId: string;
  invoiceId: number;
  eventType: string;
}

export type CardEventOutcome = "applied" | "duplicate" | "needs_refund" | "ignored";

const cardPaymentPrefix = (invoiceId: number) => `CARD_PAYMENT#${pad(invoiceId)}#`;

const MAX_ATTEMPTS = 5;

/** Acts on a verified webhook event. Safe to call any number of times with the same event. */
export async function handleCardProcessorEvent(deps: Deps, event: CardProcessorEvent): Promise<CardEventOutcome> {
  if (event.kind !== "checkout_paid") return "ignored";
  if (!event.userId || !event.invoiceId) {
    // Not one of ours (another integration on the same Stripe account): nothing to attach it to.
    console.warn(JSON.stringify({ level: "warn", message: "paid checkout session without invoice metadata", eventId: event.eventId, sessionId: event.sessionId }));
    return "ignored";
  }
  const ctx: Ctx = { ...deps, userId: event.userId };
  const invoiceId = event.invoiceId;

  for (let attempt = 0; ; attempt++) {
    const invoice = await findInvoice(ctx, invoiceId, true);
    const reason = refundReason(invoice, event);
    const duplicate = new Error("duplicate");
    const raced = new Error("raced");
    const record: Write = {
      op: {
        Put: {
          TableName: ctx.db.table,
          Item: paymentItem(ctx, invoiceId, event, reason),
          ConditionExpression: "attribute_not_exists(pk)",
        },
      },
      onConditionFailed: () => duplicate,
    };
    const writes = [record];
    if (!reason) {
      writes.push({
        op: {
          Put: {
            TableName: ctx.db.table,
            Item: paidInvoice(ctx, invoice!, event),
            ConditionExpression: "#version = :v",
            ExpressionAttributeNames: { "#version": "version" },
            ExpressionAttributeValues: { ":v": invoice!.version },
          },
        },
        onConditionFailed: () => raced,
      });
    }
    try {
      await commit(ctx, writes);
      return reason ? "needs_refund" : "applied";
    } catch (error) {
      if (error === duplicate) return "duplicate";
      if (error !== raced) throw error;
      // The invoice changed between the read and the write: decide again on what it is now.
      if (attempt + 1 >= MAX_ATTEMPTS) throw new DomainError("service_unavailable", "the invoice is being changed; retry");
    }
  }
}

/** Why this payment cannot pay the invoice, or undefined when it pays it. */
function refundReason(invoice: InvoiceItem | undefined, event: CheckoutPaidEvent): NeedsRefundReason | undefined {
  if (!invoice) return "invoice_not_found";
  if (invoice.status === "void") return "invoice_void";
  if (invoice.status === "paid") return "invoice_already_paid";
  if (invoice.status !== "sent" && invoice.status !== "overdue") return "invoice_not_payable";
  const outstanding = centsOf(invoice.total) - centsOf(invoice.amountPaid);
  if (event.currency !== invoice.currency || event.amountCents !== outstanding) return "amount_mismatch";
  return undefined;
}

/** sent/overdue → paid by card, as mark-paid does it: amountPaid = total, off the overdue job's list. */
function paidInvoice(ctx: Ctx, invoice: InvoiceItem, event: CheckoutPaidEvent): InvoiceItem {
  const { duePk: _duePk, dueSk: _dueSk, ...rest } = invoice;
  return {
    ...rest,
    ...invoiceStatusKeys(ctx.userId, "paid", invoice.id),
    status: "paid",
    amountPaid: invoice.total,
    paidAt: event.occurredAt,
    paymentMethod: "card",
    paymentReference: event.paymentReference,
    updatedAt: nowIso(ctx),
    version: invoice.version + 1,
  };
}

function paymentItem(ctx: Ctx, invoiceId: number, event: CheckoutPaidEvent, reason: NeedsRefundReason | undefined): CardPaymentItem {
  return {
    pk: userPk(ctx.userId),
    sk: `${cardPaymentPrefix(invoiceId)}${event.sessionId}`,
    userId: ctx.userId,
    invoiceId,
    sessionId: event.sessionId,
    paymentReference: event.paymentReference,
    amount: event.amountCents === null ? null : formatMoney(event.amountCents),
    currency: event.currency,
    status: reason ? "needs_refund" : "applied",
    reason: reason ?? null,
    paidAt: event.occurredAt,
    recordedAt: nowIso(ctx),
    eventId: event.eventId,
    eventType: event.eventType,
  };
}

/** GET /invoices/{id}/card-payments: the invoice's card payments, oldest first. Short: one per paid session. */
export async function listCardPayments(ctx: Ctx, invoiceId: number): Promise<CardPayment[]> {
  await getInvoice(ctx, invoiceId);
  const items: CardPaymentItem[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await ctx.db.doc.send(
      new QueryCommand({
        TableName: ctx.db.table,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
        ExpressionAttributeValues: { ":pk": userPk(ctx.userId), ":prefix": cardPaymentPrefix(invoiceId) },
        ExclusiveStartKey: start,
      }),
    );
    items.push(...((out.Items ?? []) as CardPaymentItem[]));
    start = out.LastEvaluatedKey;
  } while (start);
  return items
    .sort((a, b) => a.paidAt.localeCompare(b.paidAt) || a.sessionId.localeCompare(b.sessionId))
    .map(toCardPayment);
}

const toCardPayment = (item: CardPaymentItem): CardPayment => ({
  sessionId: item.sessionId,
  paymentReference: item.paymentReference,
  amount: item.amount,
  currency: item.currency,
  status: item.status,
  reason: item.reason,
  paidAt: item.paidAt,
  recordedAt: item.recordedAt,
  eventId: item.eventId,
});
