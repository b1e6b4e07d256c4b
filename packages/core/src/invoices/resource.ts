import * as v from "valibot";
import { PeppolDeliveryOut } from "../peppol/resource";
import { documentTail, LineItem, totals } from "../documents/resource";
import { currencyOut, emailOut, idOut, moneyOut, nullableText, publicTokenOut, text, timestampOut } from "../resource";

/** The invoice resource's response shape (see ../resource.ts); model.ts holds the stored item. */
export const INVOICE_STATUSES = ["draft", "finalized", "sent", "paid", "overdue", "void"] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];
export const PAYMENT_METHODS = ["cash", "check", "bank_transfer", "other"] as const;
/** `card` is set only by the card processor's payments, never by mark-paid or a manual payment. */
export const paymentMethodOut = v.picklist([...PAYMENT_METHODS, "card"], "`card` only from the card processor");
export type PaymentMethod = v.InferOutput<typeof paymentMethodOut>;

export const Invoice = v.strictObject({
  id: idOut,
  clientId: idOut,
  invoiceNumber: v.nullable(
    v.pipe(v.string(), v.regex(/^INV-\d{6,}$/), v.description("Assigned at finalize; null while draft")),
  ),
  status: v.picklist(INVOICE_STATUSES),
  currency: currencyOut,
  ...totals,
  amountPaid: moneyOut,
  creditedAmount: v.pipe(moneyOut, v.description('Σ total of the invoice\'s credit notes; "0.00" until credited')),
  /** Derived, never stored: what is still to be paid. */
  amountDue: v.pipe(moneyOut, v.description("max(0, total − amountPaid − creditedAmount)")),
  notes: nullableText,
  terms: nullableText,
  dueDate: v.nullable(timestampOut),
  issueDate: v.nullable(timestampOut),
  sentAt: v.nullable(timestampOut),
  paidAt: v.nullable(timestampOut),
  voidedAt: v.pipe(v.nullable(timestampOut), v.description("When it became void; null unless void")),
  publicToken: publicTokenOut,
  clientName: text,
  clientEmail: v.nullable(emailOut),
  lineItems: v.array(LineItem),
  cardProcessorPaymentLink: v.nullable(text),
  cardProcessorCheckoutSessionId: v.nullable(text),
  altProcessorPaymentLink: v.nullable(text),
  paymentMethod: v.nullable(paymentMethodOut),
  paymentReference: nullableText,
  recurringScheduleId: v.nullable(idOut),
  estimateId: v.nullable(idOut),
  taxExemptionReason: nullableText,
  buyerReference: nullableText,
  purchaseOrderReference: nullableText,
  deliveryDate: v.nullable(v.pipe(v.string(), v.regex(/^\d{4}-\d{2}-\d{2}$/), v.description("Date of supply"))),
  peppolDelivery: PeppolDeliveryOut,
  ...documentTail("The business profile as it was at finalize; null while draft"),
});
export type Invoice = v.InferOutput<typeof Invoice>;
