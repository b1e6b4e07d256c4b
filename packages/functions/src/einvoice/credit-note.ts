import type { CreditNote } from "@invoicing/core/credit-notes/resource";
import { displayMoney } from "@invoicing/core/documents/display";
import type { Invoice } from "@invoicing/core/invoices/model";
import { centsOf } from "@invoicing/core/money/money";
import { creditNoteReasonLabel } from "@invoicing/core/credit-notes/view";
import type { EInvoiceSource } from "./source";

/** What a credit note's e-invoice takes from the invoice it corrects (the credit note has no copy). */
export type CreditedInvoice = Pick<Invoice, "issueDate" | "deliveryDate" | "buyerReference" | "purchaseOrderReference">;

/**
 * A credit note as the writer's input (docs/e-invoices.md, "Credit notes"): type code 381 with the
 * invoice it corrects as the preceding invoice reference (BG-3), its own number (BT-1), issue date,
 * lines, totals and tax breakdown; the parties, currency and exemption reason are the invoice's
 * (copied onto the credit note when it was issued). From the invoice: the buyer reference (BT-10,
 * the Leitweg-ID XRechnung needs), the purchase order (BT-13) and the date of supply (BT-72: the
 * supply being corrected). Nothing was paid on a credit note: BT-113 is 0 and BT-115 its total,
 * what the seller owes the buyer, settled as the payment terms text (BT-20) says: deducted from
 * the invoice's amount due, refunded, or both. Reason and memo are its note (BT-22).
 */
export function creditNoteSourceOf(creditNote: CreditNote, invoice: CreditedInvoice): EInvoiceSource {
  const reason = creditNote.reason ? `Reason: ${creditNoteReasonLabel(creditNote.reason)}` : null;
  const notes = [reason, creditNote.memo].filter((s): s is string => !!s).join("\n") || null;
  return {
    invoiceNumber: creditNote.creditNoteNumber,
    status: "finalized",
    currency: creditNote.currency,
    issueDate: creditNote.issueDate,
    dueDate: null,
    deliveryDate: invoice.deliveryDate ?? invoice.issueDate,
    notes,
    terms: settlementText(creditNote),
    buyerReference: invoice.buyerReference,
    purchaseOrderReference: invoice.purchaseOrderReference,
    taxExemptionReason: creditNote.taxExemptionReason,
    subtotal: creditNote.subtotal,
    taxTotal: creditNote.taxTotal,
    total: creditNote.total,
    amountPaid: "0.00",
    amountDue: creditNote.total,
    clientName: creditNote.clientName,
    clientEmail: creditNote.clientEmail,
    clientAddress: creditNote.clientAddress,
    clientTaxId: creditNote.clientTaxId,
    seller: creditNote.seller,
    lineItems: creditNote.lineItems.map((line) => ({
      id: line.id,
      description: line.description,
      quantity: line.quantity,
      unitPrice: line.unitPrice,
      taxRate: line.taxRate,
      taxCategory: line.taxCategory,
      amount: line.amount,
      sortOrder: line.sortOrder,
    })),
    taxBreakdown: creditNote.taxBreakdown,
    payLink: null,
    // An invoice is always issued (dated) before it can be credited.
    correcting: { invoiceNumber: creditNote.invoiceNumber, issueDate: invoice.issueDate ?? creditNote.issueDate },
  };
}

/** How the credited amount is settled, in words: taken off the invoice's amount due, refunded, or both. */
function settlementText(creditNote: CreditNote): string {
  const applied = centsOf(creditNote.amountAppliedToDue) > 0n;
  const refund = centsOf(creditNote.amountToRefund) > 0n;
  const money = (amount: string) => displayMoney(amount, creditNote.currency);
  const deducted = `${money(creditNote.amountAppliedToDue)} deducted from the amount due of invoice ${creditNote.invoiceNumber}`;
  const refunded = `${money(creditNote.amountToRefund)} to be refunded`;
  if (applied && refund) return `${deducted}; ${refunded}.`;
  if (refund) return `${refunded}.`;
  return `${deducted}.`;
}
