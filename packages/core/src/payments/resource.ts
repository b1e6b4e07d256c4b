import * as v from "valibot";
import { paymentMethodOut } from "../invoices/resource";
import { idOut, moneyOut, nullableText, timestampOut } from "../resource";

/** The payment resource's response shape (see ../resource.ts); model.ts holds the stored item. */
const PAYMENT_SOURCES = ["manual", "card_processor"] as const;
export type PaymentSource = (typeof PAYMENT_SOURCES)[number];
/**
 * `succeeded`: counted in amountPaid (less what was refunded of it). `refunded`: wholly refunded,
 * counts nothing. `needs_refund`: card money that arrived for an invoice that could not take it
 * (void, already paid, more than was due): never counted.
 */
const PAYMENT_STATUSES = ["succeeded", "refunded", "needs_refund"] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export const Payment = v.strictObject({
  /** Counted per invoice: a payment is named by `invoiceId` and `id` together. */
  id: idOut,
  invoiceId: idOut,
  amount: moneyOut,
  /** cash, check, bank_transfer, other (manual) or card (card processor). */
  paymentMethod: paymentMethodOut,
  paidAt: timestampOut,
  reference: nullableText,
  source: v.picklist(PAYMENT_SOURCES),
  status: v.pipe(
    v.picklist(PAYMENT_STATUSES),
    v.description(
      "needs_refund: card money for a void or already paid invoice, or more than was due; never counted in amountPaid",
    ),
  ),
  refundedAmount: moneyOut,
  createdAt: timestampOut,
});
export type Payment = v.InferOutput<typeof Payment>;
