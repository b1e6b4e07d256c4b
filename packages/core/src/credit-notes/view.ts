import type { DocumentView, LabelledValue } from "../capabilities/document-view";
import { displayDate, displayMoney } from "../documents/display";
import { commonView, type DocumentAssets, type PeppolSent } from "../documents/view";
import { centsOf } from "../money/money";
import type { CreditNote, CreditNoteReason } from "./resource";

const REASON_LABELS: Record<CreditNoteReason, string> = {
  duplicate: "Duplicate",
  order_change: "Order change",
  product_unsatisfactory: "Product unsatisfactory",
  fraudulent: "Fraudulent",
  other: "Other",
};
/** A credit note's `reason` as people read it, on its documents and in its e-invoice's note. */
export const creditNoteReasonLabel = (reason: CreditNoteReason): string => REASON_LABELS[reason];

/** "Credit note for invoice INV-000001 of 2 Nov 2026": the invoice a credit note corrects. */
const creditNoteReference = (creditNote: Pick<CreditNote, "invoiceNumber">, invoiceIssueDate: string | null) =>
  `Credit note for invoice ${creditNote.invoiceNumber}${invoiceIssueDate ? ` of ${displayDate(invoiceIssueDate)}` : ""}`;

/**
 * A credit note (API.md section 17) as its documents show it: everything an invoice shows, titled
 * "Credit note", with the invoice it corrects and its date, the reason and memo, what it took off
 * the invoice's amount due and the amount to be refunded when not zero; never payment instructions
 * or a pay button (the client pays nothing). `invoiceIssueDate`: the corrected invoice's.
 */
export function creditNoteView(
  creditNote: CreditNote & PeppolSent,
  invoiceIssueDate: string | null,
  assets: DocumentAssets,
): DocumentView {
  const money = (amount: string) => displayMoney(amount, creditNote.currency);
  const facts: LabelledValue[] = [
    { label: "Credit note no.", value: creditNote.creditNoteNumber },
    { label: "Issue date", value: displayDate(creditNote.issueDate) },
    { label: "Invoice no.", value: creditNote.invoiceNumber },
  ];
  if (invoiceIssueDate) facts.push({ label: "Invoice date", value: displayDate(invoiceIssueDate) });
  if (creditNote.reason) facts.push({ label: "Reason", value: creditNoteReasonLabel(creditNote.reason) });
  const totals: DocumentView["totals"] = [
    { label: "Subtotal", value: money(creditNote.subtotal) },
    { label: "Tax", value: money(creditNote.taxTotal) },
    { label: "Total", value: money(creditNote.total), emphasis: true },
  ];
  if (centsOf(creditNote.amountAppliedToDue) > 0n) {
    totals.push({
      label: `Deducted from invoice ${creditNote.invoiceNumber}`,
      value: money(creditNote.amountAppliedToDue),
    });
  }
  if (centsOf(creditNote.amountToRefund) > 0n) {
    totals.push({ label: "Amount to be refunded", value: money(creditNote.amountToRefund), emphasis: true });
  }
  return {
    ...commonView({ ...creditNote, notes: null, terms: null }, assets),
    kind: "credit_note",
    title: `Credit note ${creditNote.creditNoteNumber}`,
    reference: creditNoteReference(creditNote, invoiceIssueDate),
    memo: creditNote.memo,
    number: creditNote.creditNoteNumber,
    draft: false,
    facts,
    totals,
    payment: null,
    payLink: null,
  };
}
