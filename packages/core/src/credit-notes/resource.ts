import * as v from "valibot";
import { PeppolDeliveryOut } from "../peppol/resource";
import { Address } from "../address/resource";
import { LineItem, TaxBreakdownEntry, totals } from "../documents/resource";
import { Seller } from "../profile/resource";
import { currencyOut, emailOut, idOut, moneyOut, nullableText, publicTokenOut, text, timestampOut } from "../resource";

/**
 * The credit note resource's response shape (API.md section 17; see ../resource.ts). A credit note
 * corrects an issued invoice: it is final once issued (never edited, deleted or voided), numbered
 * CN-000001… in its own gapless series, and its amounts are positive numbers of what is credited.
 */
const CREDIT_NOTE_STATUSES = ["issued"] as const;
export const CREDIT_NOTE_REASONS = [
  "duplicate",
  "order_change",
  "product_unsatisfactory",
  "fraudulent",
  "other",
] as const;
export type CreditNoteReason = (typeof CREDIT_NOTE_REASONS)[number];

/** A credited line: a line of the invoice (`invoiceLineId`) or a free line (`invoiceLineId` null). */
export const CreditNoteLineItem = v.strictObject({
  id: v.pipe(idOut, v.description("Unique within its credit note")),
  invoiceLineId: v.pipe(v.nullable(idOut), v.description("The invoice line it credits; null for a free line")),
  // Every other field is an invoice line's, with the same meaning and arithmetic.
  ...(({ id: _id, ...line }) => line)(LineItem.entries),
});
export type CreditNoteLineItem = v.InferOutput<typeof CreditNoteLineItem>;

export const CreditNote = v.strictObject({
  id: idOut,
  invoiceId: idOut,
  invoiceNumber: v.pipe(v.string(), v.regex(/^INV-\d{6,}$/), v.description("The number of the invoice it corrects")),
  creditNoteNumber: v.pipe(v.string(), v.regex(/^CN-\d{6,}$/), v.description("Per user, gapless, in issue order")),
  status: v.picklist(CREDIT_NOTE_STATUSES),
  reason: v.nullable(v.picklist(CREDIT_NOTE_REASONS)),
  memo: nullableText,
  currency: currencyOut,
  issueDate: v.pipe(timestampOut, v.description("The time the credit note was issued")),
  lineItems: v.array(CreditNoteLineItem),
  ...totals,
  taxBreakdown: v.pipe(
    v.array(TaxBreakdownEntry),
    v.description("One entry per (category, rate), by rate descending then category; adds up to subtotal and taxTotal"),
  ),
  taxExemptionReason: nullableText,
  amountAppliedToDue: v.pipe(moneyOut, v.description("What it took off the invoice's amountDue")),
  amountToRefund: v.pipe(moneyOut, v.description("The rest of its total: money the seller owes back")),
  clientId: idOut,
  clientName: text,
  clientEmail: v.nullable(emailOut),
  clientAddress: v.nullable(Address),
  clientTaxId: nullableText,
  seller: v.nullable(v.pipe(Seller, v.description("The invoice's seller snapshot"))),
  publicToken: publicTokenOut,
  sentAt: v.nullable(timestampOut),
  peppolDelivery: PeppolDeliveryOut,
  createdAt: timestampOut,
});
export type CreditNote = v.InferOutput<typeof CreditNote>;
