import * as v from "valibot";
import { PAYMENT_METHODS } from "@invoicing/core/invoices/model";
import { positiveAmount, timestamp } from "./common";

/** Request bodies of an invoice's payments. */
export const createPaymentBody = v.strictObject({
  amount: positiveAmount,
  paymentMethod: v.picklist(PAYMENT_METHODS, `must be one of ${PAYMENT_METHODS.join(", ")}`),
  paidAt: v.optional(timestamp),
  reference: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(200)))),
});

/** `amount` absent: all that is not yet refunded. */
export const refundBody = v.strictObject({
  amount: v.optional(positiveAmount),
});
