import * as v from "valibot";
import { INVOICE_STATUSES, PAYMENT_METHODS } from "@invoicing/core/invoices/model";
import { dateOnly, httpsUrl, id, optionalText, timestamp } from "./common";
import { documentFields, documentListFilters } from "./documents";

const draftFields = {
  ...documentFields,
  issueDate: v.optional(v.nullable(timestamp)),
  dueDate: v.optional(v.nullable(timestamp)),
  altProcessorPaymentLink: v.optional(v.nullable(httpsUrl)),
  buyerReference: optionalText(200),
  purchaseOrderReference: optionalText(200),
  deliveryDate: v.optional(v.nullable(dateOnly)),
};

export const createInvoiceBody = v.strictObject({ clientId: id, ...draftFields });
export const updateInvoiceBody = v.strictObject({ clientId: v.optional(id), ...draftFields });

export { sendBody } from "./documents";

export const markPaidBody = v.strictObject({
  paymentMethod: v.picklist(PAYMENT_METHODS, `must be one of ${PAYMENT_METHODS.join(", ")}`),
  paidAt: v.optional(timestamp),
  // mark-paid records a payment: its reference obeys the payment's limit.
  reference: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(200)))),
});

export const invoiceListFilters = documentListFilters(INVOICE_STATUSES);
