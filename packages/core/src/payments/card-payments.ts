import type { Ctx, Deps } from "../deps";
import { nowIso } from "../deps";
import { commit, type Write } from "../db/commit";
import { findInvoice } from "../invoices/invoices";
import { amountDueCents, PAYABLE_STATUSES, type InvoiceItem } from "../invoices/model";
import type { CardProcessorEvent, CheckoutPaidEvent } from "../capabilities/card-processor";
import {
  checkoutPaymentKey,
  newPaymentItem,
  type NeedsRefundReason,
  type PaymentFacts,
  type PaymentItem,
} from "./model";
import { paymentWrite } from "./payments";
import { Raced } from "../db/optimistic";
import { invoiceWrite, settledInvoice, takePaymentId, untilSettled } from "./settlement";

/**
 * Payments that arrive through the card processor's webhook become `card_processor` payments of
 * their invoice, of the amount the processor reports (a partial payment is fine: the pay link
 * charges the amount due when the session was made, which a manual payment may have lowered since).
 *
 * Exactly once per checkout session: a CHECKOUT_PAYMENT#<session> marker, written only if absent, in
 * the same transaction as the payment item and the invoice's change. A retried or doubled delivery,
 * concurrent deliveries, and the two events Stripe may send for one session (completed, then
 * async_payment_succeeded) find it and answer `duplicate` without writing.
 *
 * Money the invoice cannot take is never lost: a payment for a void, already paid or not yet sent
 * invoice, for more than is due, or in another currency is recorded with status `needs_refund`
 * (counted in nothing; the reason kept on the item and logged) for the user to refund through
 * POST …/payments/{id}/refund.
 */
type CardEventOutcome = "applied" | "duplicate" | "needs_refund" | "ignored";

class Duplicate extends Error {}

/** Acts on a verified webhook event. Safe to call any number of times with the same event. */
export async function handleCardProcessorEvent(deps: Deps, event: CardProcessorEvent): Promise<CardEventOutcome> {
  if (event.kind !== "checkout_paid") return "ignored";
  if (!event.userId || !event.invoiceId || event.amountCents === null || !event.currency) {
    // Not a session this service made (its signed metadata is missing or does not match): another
    // integration on the same Stripe account. Nothing to attach it to, and nothing to trust.
    log("paid checkout session not made by this service", event);
    return "ignored";
  }
  const ctx: Ctx = { ...deps, userId: event.userId };
  const invoiceId = event.invoiceId;
  try {
    const result = await untilSettled(async () => {
      const invoice = await findInvoice(ctx, invoiceId, true);
      if (!invoice) {
        log("paid checkout session for an invoice that does not exist", event);
        return undefined;
      }
      const reason = needsRefundReason(invoice, event);
      // Counted: amountPaid grows (maybe to paid). Not counted: only the payment id is taken. Either
      // way the invoice is written conditioned on the version read, so a concurrent change makes
      // us decide again.
      const next = reason
        ? { ...invoice }
        : settledInvoice(ctx, invoice, event.amountCents!, {
            paidAt: event.occurredAt,
            paymentMethod: "card",
            reference: event.paymentReference,
          });
      const payment = cardPayment(ctx, invoice, takePaymentId(invoice, next), event, reason);
      if (reason) log(`card payment recorded for refund: ${reason}`, event);
      const writes: Write[] = [
        markerWrite(ctx, payment, event),
        paymentWrite(ctx, payment),
        reason ? paymentIdWrite(ctx, invoice, next.nextPaymentId!) : invoiceWrite(ctx, next, invoice.version),
      ];
      await commit(ctx, writes);
      return { before: invoice, after: next, outcome: reason ? ("needs_refund" as const) : ("applied" as const) };
    });
    if (!result) return "ignored";
    return result.outcome;
  } catch (error) {
    if (error instanceof Duplicate) return "duplicate";
    throw error;
  }
}

/** Why this payment cannot count for the invoice, or undefined when it does. */
function needsRefundReason(invoice: InvoiceItem, event: CheckoutPaidEvent): NeedsRefundReason | undefined {
  if (invoice.status === "void") return "invoice_void";
  if (invoice.status === "paid") return "invoice_already_paid";
  if (!PAYABLE_STATUSES.includes(invoice.status)) return "invoice_not_payable";
  if (event.currency !== invoice.currency) return "currency_mismatch";
  if (event.amountCents! > amountDueCents(invoice)) return "amount_exceeds_due";
  return undefined;
}

function cardPayment(
  ctx: Ctx,
  invoice: InvoiceItem,
  id: number,
  event: CheckoutPaidEvent,
  reason: NeedsRefundReason | undefined,
): PaymentItem {
  const facts: PaymentFacts = {
    id,
    currency: event.currency!,
    paymentMethod: "card",
    paidAt: event.occurredAt,
    reference: event.paymentReference,
    source: "card_processor",
    status: reason ? "needs_refund" : "succeeded",
    checkoutSessionId: event.sessionId,
    ...(event.paymentIntentId ? { paymentIntentId: event.paymentIntentId } : {}),
    eventId: event.eventId,
    ...(reason ? { reason } : {}),
  };
  return newPaymentItem(ctx.userId, invoice.id, event.amountCents!, facts, nowIso(ctx));
}

/**
 * How long the marker guards its session: 60 days. Its only use is refusing a second payment from
 * the same session, and a session's events can come again only while the card processor keeps them:
 * Stripe retries a delivery for up to 3 days and keeps an event 30 days, during which it can be
 * resent by hand. Twice that, and DynamoDB's TTL deletes later still.
 */
export const KEEP_CHECKOUT_MARKER_SECONDS = 60 * 86_400;

/** The session's "paid once" marker (see model.ts), pointing at its payment. */
function markerWrite(ctx: Ctx, payment: PaymentItem, event: CheckoutPaidEvent): Write {
  return {
    op: {
      Put: {
        TableName: ctx.db.table,
        Item: {
          ...checkoutPaymentKey(ctx.userId, event.sessionId),
          type: "checkout_payment",
          invoiceId: payment.invoiceId,
          paymentId: payment.id,
          eventId: event.eventId,
          createdAt: payment.createdAt,
          expiresAt: Math.floor(Date.parse(payment.createdAt) / 1000) + KEEP_CHECKOUT_MARKER_SECONDS,
        },
        ConditionExpression: "attribute_not_exists(pk)",
      },
    },
    onConditionFailed: () => new Duplicate(),
  };
}

/**
 * Money the invoice does not take changes nothing of the invoice resource: only the payment id is
 * taken (no new version, so no invoice event). Conditioned on the version read, so the decision
 * stands on the invoice as it is.
 */
function paymentIdWrite(ctx: Ctx, invoice: InvoiceItem, nextPaymentId: number): Write {
  return {
    op: {
      Update: {
        TableName: ctx.db.table,
        Key: { pk: invoice.pk, sk: invoice.sk },
        UpdateExpression: "SET nextPaymentId = :next",
        ConditionExpression: "#version = :v",
        ExpressionAttributeNames: { "#version": "version" },
        ExpressionAttributeValues: { ":next": nextPaymentId, ":v": invoice.version },
      },
    },
    onConditionFailed: () => new Raced(),
  };
}

function log(message: string, event: CheckoutPaidEvent): void {
  console.warn(
    JSON.stringify({
      level: "warn",
      message,
      eventId: event.eventId,
      sessionId: event.sessionId,
      userId: event.userId,
      invoiceId: event.invoiceId,
    }),
  );
}
