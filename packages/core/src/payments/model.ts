import { pad, userPk } from "../db/keys";
import { centsOf, formatMoney } from "../money/money";
import { toResource } from "../resource";
import { Payment, type PaymentSource, type PaymentStatus } from "./resource";

/**
 * Payments as records (docs/payments.md): every payment of an invoice is its own item beside the
 * invoice, written in the same transaction as the invoice's `amountPaid` change. The invoice's
 * `amountPaid` is always the sum of its counted payments: `amount − refundedAmount` of every payment
 * that is not `needs_refund`. The resource's shape is its response schema (./resource.ts).
 */
export type { Payment, PaymentSource, PaymentStatus };

/** Why card money was not counted (logged and kept on the item; not in the API's Payment). */
export type NeedsRefundReason =
  | "invoice_void"
  | "invoice_already_paid"
  | "invoice_not_payable"
  | "amount_exceeds_due"
  | "currency_mismatch";

export interface PaymentItem extends Payment {
  pk: string;
  sk: string;
  type: "payment";
  userId: string;
  invoiceId: number;
  currency: string;
  /** +1 on every write; refunds condition on it. */
  version: number;
  /** Card payments: the checkout session and the PaymentIntent (what a refund names). */
  checkoutSessionId?: string;
  paymentIntentId?: string;
  eventId?: string;
  reason?: NeedsRefundReason;
  /** The processor's ids of the refunds recorded, so a retried refund is recorded once. */
  refundIds?: string[];
}

export const toPayment = (item: PaymentItem): Payment => toResource(item, Payment);

/**
 * Sort key PAYMENT#<invoice id>#<payment id>: one Query lists an invoice's payments in id order
 * (oldest first). Not INVOICE#<id>#…: that prefix would put payments into the invoice list's Query.
 */
export const paymentPrefix = (invoiceId: number): string => `PAYMENT#${pad(invoiceId)}#`;
export const paymentKey = (userId: string, invoiceId: number, paymentId: number) => ({
  pk: userPk(userId),
  sk: `${paymentPrefix(invoiceId)}${pad(paymentId)}`,
});

/** What a payment's source states about it; the rest of a new payment item is the same for all. */
export type PaymentFacts = Pick<
  PaymentItem,
  "id" | "currency" | "paymentMethod" | "paidAt" | "reference" | "source" | "status"
> &
  Pick<PaymentItem, "checkoutSessionId" | "paymentIntentId" | "eventId" | "reason">;

/** A new payment item of invoice `invoiceId`, of `amountCents`, nothing refunded yet. */
export const newPaymentItem = (
  userId: string,
  invoiceId: number,
  amountCents: bigint,
  facts: PaymentFacts,
  now: string,
): PaymentItem => ({
  ...paymentKey(userId, invoiceId, facts.id),
  type: "payment",
  userId,
  invoiceId,
  version: 1,
  amount: formatMoney(amountCents),
  refundedAmount: "0.00",
  createdAt: now,
  ...facts,
});

/**
 * Each checkout session pays at most once: a marker item per session, written only if absent, in
 * the transaction that records its payment. Keyed by session, not event: the two events Stripe may
 * send for one payment (completed, async_payment_succeeded) must not pay twice either.
 */
export const checkoutPaymentKey = (userId: string, sessionId: string) => ({
  pk: userPk(userId),
  sk: `CHECKOUT_PAYMENT#${sessionId}`,
});

/** What a payment contributes to its invoice's amountPaid, in cents. */
export function countedCents(payment: Pick<Payment, "status" | "amount" | "refundedAmount">): bigint {
  if (payment.status === "needs_refund") return 0n;
  return centsOf(payment.amount) - centsOf(payment.refundedAmount);
}
