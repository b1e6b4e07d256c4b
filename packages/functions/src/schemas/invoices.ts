import * as v from "valibot";
import { INVOICE_STATUSES, PAYMENT_METHODS } from "@invoicing/core/invoices/model";
import { currency, email, httpsUrl, id, lineItems, notes, pathId, timestamp } from "./common";

const draftFields = {
  currency: v.optional(currency),
  issueDate: v.optional(v.nullable(timestamp)),
  dueDate: v.optional(v.nullable(timestamp)),
  notes: v.optional(v.nullable(notes)),
  terms: v.optional(v.nullable(notes)),
  lineItems: v.optional(lineItems),
  altProcessorPaymentLink: v.optional(v.nullable(httpsUrl)),
};

export const createInvoiceBody = v.strictObject({ clientId: id, ...draftFields });
export const updateInvoiceBody = v.strictObject({ clientId: v.optional(id), ...draftFields });

export const sendBody = v.strictObject({ to: v.optional(email) });

export const markPaidBody = v.strictObject({
  paymentMethod: v.picklist(PAYMENT_METHODS, `must be one of ${PAYMENT_METHODS.join(", ")}`),
  paidAt: v.optional(timestamp),
  reference: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(500)))),
});

export const invoiceListFilters = {
  status: v.optional(v.picklist(INVOICE_STATUSES, `must be one of ${INVOICE_STATUSES.join(", ")}`)),
  clientId: v.optional(pathId),
};
