import type { Ctx } from "../deps";
import { commit, type Write } from "../db/commit";
import { putIfVersion } from "../db/versioning";
import { DomainError } from "../errors";
import { centsOf, formatMoney } from "../money/money";
import { CardProcessorError, type Refund } from "../capabilities/card-processor";
import { countedCents, type PaymentItem } from "./model";
import { readPayment } from "./payments";
import { Raced } from "../db/optimistic";
import { invoiceWrite, settledInvoice, untilSettled } from "./settlement";

/**
 * POST /invoices/{id}/payments/{paymentId}/refund: card payments only, through the card processor,
 * then recorded. A refunded part of a `succeeded` payment leaves amountPaid (a paid invoice reopens,
 * as when a payment is deleted); a `needs_refund` payment was never counted, so no amount changes.
 * `status` becomes `refunded` when nothing is left to refund.
 *
 * The processor first, our write second — the money moves, then we record it. If the refund
 * succeeded and our write then fails (the database unavailable: 503), nothing is recorded and the
 * client retries. The retry must not refund twice: the processor's idempotency key is derived from
 * the payment and what it asks, `payment-refund:<user>:<invoice>:<payment>:<refunded before>+<amount>`.
 * A retry reads the same refundedAmount (our write never happened), sends the same key, and gets the
 * first refund back instead of a second one; it then records it. Once recorded, the same request
 * starts from the new refundedAmount: a new key, a new refund — as it should, since the client asked
 * again. Each recorded refund keeps the processor's refund id, so the same refund is never counted
 * twice (two concurrent identical requests share a key and a refund; the second finds it recorded).
 * Limit: Stripe keeps idempotency keys for at least 24 hours; a retry after that may refund again
 * (Stripe still refuses to refund more than the charge).
 */
export async function refundPayment(
  ctx: Ctx,
  invoiceId: number,
  paymentId: number,
  amountCents?: bigint,
): Promise<PaymentItem> {
  const { payment } = await readPayment(ctx, invoiceId, paymentId);
  if (payment.source !== "card_processor") {
    throw notPossible(`payment ${paymentId} was recorded by hand: delete it instead`);
  }
  if (!ctx.payments) throw notPossible("no card processor is configured");
  if (!payment.paymentIntentId) {
    throw notPossible(`the card processor named no payment to refund for payment ${paymentId}`);
  }
  const left = centsOf(payment.amount) - centsOf(payment.refundedAmount);
  const amount = amountCents ?? left;
  if (left <= 0n) throw notPossible(`payment ${paymentId} is already wholly refunded`);
  if (amount > left) throw notPossible(`only ${formatMoney(left)} of payment ${paymentId} is left to refund`);

  let refund: Refund;
  try {
    refund = await ctx.payments.createRefund({
      paymentIntentId: payment.paymentIntentId,
      amountCents: amount,
      currency: payment.currency,
      idempotencyKey: refundKey(ctx.userId, invoiceId, paymentId, payment.refundedAmount, amount),
      userId: ctx.userId,
      invoiceId,
      paymentId,
    });
  } catch (error) {
    if (!(error instanceof CardProcessorError)) throw error;
    if (error.kind === "rejected") throw notPossible(`the card processor refused the refund (${error.message})`);
    throw new DomainError("service_unavailable", "the card processor is unavailable; retry shortly");
  }
  if (refund.status !== "succeeded" && refund.status !== "pending") {
    throw notPossible(`the card processor's refund ${refund.id} is ${refund.status}`);
  }
  return recordRefund(ctx, invoiceId, paymentId, refund.id, amount);
}

/** Records a refund the processor made, once (by its id), with the invoice's amountPaid change. */
/** Stripe's idempotency key of a refund: the payment, what was refunded before, and what is asked. */
const refundKey = (userId: string, invoiceId: number, paymentId: number, refundedBefore: string, amount: bigint) =>
  `payment-refund:${userId}:${invoiceId}:${paymentId}:${refundedBefore}+${formatMoney(amount)}`;

function recordRefund(
  ctx: Ctx,
  invoiceId: number,
  paymentId: number,
  refundId: string,
  amount: bigint,
): Promise<PaymentItem> {
  return untilSettled(async () => {
    const { invoice, payment } = await readPayment(ctx, invoiceId, paymentId);
    if (payment.refundIds?.includes(refundId)) return payment; // a retry of one already recorded
    // The money has gone back: record it even if the payment changed since (a concurrent refund).
    const refunded = centsOf(payment.refundedAmount) + amount;
    const next: PaymentItem = {
      ...payment,
      refundedAmount: formatMoney(refunded),
      status: refunded >= centsOf(payment.amount) ? "refunded" : payment.status,
      refundIds: [...(payment.refundIds ?? []), refundId],
      version: payment.version + 1,
    };
    const delta = countedCents(next) - countedCents(payment);
    const writes: Write[] = [
      { op: putIfVersion(ctx.db.table, next, payment.version), onConditionFailed: () => new Raced() },
    ];
    if (delta !== 0n) writes.push(invoiceWrite(ctx, settledInvoice(ctx, invoice, delta), invoice.version));
    await commit(ctx, writes, next);
    return next;
  });
}

const notPossible = (detail: string) => new DomainError("refund_not_possible", detail);
