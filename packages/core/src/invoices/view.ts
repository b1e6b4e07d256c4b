import type { Deps } from "../deps";
import type { DocumentView, LabelledValue } from "../capabilities/document-view";
import { displayDate, displayMoney } from "../documents/display";
import { publicInvoicePayUrl } from "../documents/links";
import { commonView, dateOnly, type DocumentAssets, type PeppolSent } from "../documents/view";
import { centsOf, formatMoney } from "../money/money";
import { displayIban } from "../profile/iban";
import type { InvoiceAsSent } from "../capabilities/email-transport";
import {
  amountDueCents,
  type Invoice,
  type InvoiceItem,
  type InvoiceStatus,
  PAYMENT_REQUESTED_STATUSES,
  toInvoice,
} from "./model";

/**
 * THE pay button's target, in one place: the card processor's link when there is one, else the
 * alternative processor's; none once the invoice is paid or void. Only https links: they come
 * from users, and a `javascript:` URL must never become a button.
 */
function payLinkOf(
  invoice: Pick<Invoice, "status" | "publicToken" | "cardProcessorPaymentLink" | "altProcessorPaymentLink">,
  deps: Pick<Deps, "publicBaseUrl">,
): string | null {
  if (!PAYMENT_REQUESTED_STATUSES.includes(invoice.status)) return null;
  // A checkout session expires after a day: the button goes through our /pay route, which reuses
  // the session while it is open and makes a new one after.
  if (invoice.cardProcessorPaymentLink) return publicInvoicePayUrl(deps, invoice.publicToken);
  const link = invoice.altProcessorPaymentLink;
  return link && /^https:\/\//i.test(link) ? link : null;
}

/** max(0, total − amountPaid − creditedAmount), exact: the one rule of payments/settlement.ts. */
export const amountDue = (
  invoice: Pick<Invoice, "total" | "amountPaid"> & { creditedAmount?: string | null },
): string =>
  formatMoney(
    amountDueCents({
      total: invoice.total,
      amountPaid: invoice.amountPaid ?? "0.00",
      creditedAmount: invoice.creditedAmount ?? undefined,
    }),
  );

/**
 * The invoice's figures that may change after its send (InvoiceAsSent), as they are on `item`: the
 * invoice email states them in its text and stores them for its PDF (invoices/emails.ts), so the
 * two say the same however late the PDF is drawn (public/attachments.ts).
 */
export const invoiceAsSent = (item: InvoiceItem): InvoiceAsSent => ({
  status: item.status,
  amountPaid: item.amountPaid,
  creditedAmount: item.creditedAmount ?? "0.00",
  creditNoteNumbers: item.creditNoteNumbers ?? [],
  paidAt: item.paidAt ?? null,
  voidedAt: item.voidedAt ?? null,
});

/** The invoice with those figures as they were at the send; without them, as it is. */
export const invoiceAtSend = (item: InvoiceItem, asSent: InvoiceAsSent | undefined): InvoiceItem =>
  asSent ? { ...item, ...asSent, status: asSent.status as InvoiceStatus } : item;

/**
 * An invoice as its documents show it: the resource, and the numbers of its credit notes (kept on
 * the stored item, credit-notes/model.ts) for the "Credited" row.
 */
type InvoiceDocument = Invoice & PeppolSent & { creditNoteNumbers?: readonly string[] };

export const invoiceDocument = (item: InvoiceItem): InvoiceDocument => ({
  ...toInvoice(item),
  creditNoteNumbers: item.creditNoteNumbers ?? [],
  peppolDeliveredTo: item.peppolDeliveredTo ?? null,
});

export function invoiceView(
  invoice: InvoiceDocument,
  assets: DocumentAssets,
  deps: Pick<Deps, "publicBaseUrl">,
): DocumentView {
  const money = (amount: string) => displayMoney(amount, invoice.currency);
  const draft = invoice.status === "draft";
  const due = amountDue(invoice);
  const facts: LabelledValue[] = [
    { label: "Invoice no.", value: invoice.invoiceNumber ?? "Draft" },
    { label: "Issue date", value: displayDate(invoice.issueDate) },
    { label: "Due date", value: displayDate(invoice.dueDate) },
  ];
  if (invoice.deliveryDate) facts.push({ label: "Delivery date", value: dateOnly(invoice.deliveryDate) });
  if (invoice.buyerReference) facts.push({ label: "Your reference", value: invoice.buyerReference });
  if (invoice.purchaseOrderReference) facts.push({ label: "Purchase order", value: invoice.purchaseOrderReference });
  if (invoice.paidAt) facts.push({ label: "Paid on", value: displayDate(invoice.paidAt) });

  const totals: DocumentView["totals"] = [
    { label: "Subtotal", value: money(invoice.subtotal) },
    { label: "Tax", value: money(invoice.taxTotal) }, // preceded by the tax rows on the documents
    { label: "Total", value: money(invoice.total), emphasis: true },
    { label: "Amount paid", value: money(invoice.amountPaid) },
  ];
  // What its credit notes took off (API.md section 17): their numbers and the credited amount.
  const credited = invoice.creditedAmount;
  const creditNotes = invoice.creditNoteNumbers ?? [];
  if (creditNotes.length > 0 || centsOf(credited) > 0n) {
    const label = creditNotes.length > 0 ? `Credited (${creditNotes.join(", ")})` : "Credited";
    totals.push({ label, value: money(credited) });
  }
  if (invoice.status !== "void") totals.push({ label: "Amount due", value: money(due), emphasis: true });

  const bank = assets.seller?.bankAccount;
  const owing = (draft || PAYMENT_REQUESTED_STATUSES.includes(invoice.status)) && centsOf(due) > 0n;
  const payment =
    bank && owing
      ? {
          heading: "Payment by bank transfer",
          rows: [
            ...(bank.accountName ? [{ label: "Account holder", value: bank.accountName }] : []),
            { label: "IBAN", value: displayIban(bank.iban) },
            ...(bank.bic ? [{ label: "BIC", value: bank.bic }] : []),
            { label: "Reference", value: invoice.invoiceNumber ?? "the invoice number (given when issued)" },
            { label: "Amount", value: money(due) },
          ],
        }
      : null;

  return {
    ...commonView(invoice, assets),
    kind: "invoice",
    title: invoice.invoiceNumber ? `Invoice ${invoice.invoiceNumber}` : "Draft invoice",
    reference: null,
    memo: null,
    number: invoice.invoiceNumber,
    draft,
    facts,
    totals,
    payment,
    payLink: payLinkOf(invoice, deps),
  };
}
