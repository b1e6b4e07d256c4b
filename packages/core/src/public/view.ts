import { addressLines, type Address } from "../address/address";
import type { Deps } from "../context";
import type { CreditNote, CreditNoteReason } from "../credit-notes/resource";
import type { LineItem, TaxBreakdownEntry, TaxCategory } from "../documents/line-items";
import { publicInvoicePayUrl } from "./links";
import { displayDate, displayMoney } from "../documents/display";
import type { DocumentView, LabelledValue, PartyView } from "../documents/document-view";
import type { Estimate } from "../estimates/model";
import {
  amountDueCents,
  type Invoice,
  type InvoiceItem,
  PAYMENT_REQUESTED_STATUSES,
  toInvoice,
} from "../invoices/model";
import { centsOf, formatMoney } from "../money/money";
import { displayIban } from "../profile/iban";
import type { Logo } from "../profile/image";
import type { Seller } from "../profile/profile";

/** The estimate fields the views and emails read (the resource plus when it was sent). */
export type PublicEstimate = Pick<
  Estimate,
  | "status"
  | "currency"
  | "subtotal"
  | "taxTotal"
  | "total"
  | "notes"
  | "terms"
  | "validUntil"
  | "clientName"
  | "clientEmail"
  | "lineItems"
  | "createdAt"
  | "taxBreakdown"
  | "taxExemptionReason"
  | "clientAddress"
  | "clientTaxId"
  | "seller"
> & { estimateNumber: string | null; sentAt?: string | null };

/** What a document shows besides itself: the seller (its snapshot, or the current profile) and the logo. */
export interface DocumentAssets {
  seller: Seller | null;
  logo: Logo | null;
}

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
 * An invoice as its documents show it: the resource, and the numbers of its credit notes (kept on
 * the stored item, credit-notes/model.ts) for the "Credited" row.
 */
type InvoiceDocument = Invoice & { creditNoteNumbers?: readonly string[] };

export const invoiceDocument = (item: InvoiceItem): InvoiceDocument => ({
  ...toInvoice(item),
  creditNoteNumbers: item.creditNoteNumbers ?? [],
});

const STATUS_LABELS: Record<string, string> = {
  draft: "Draft",
  finalized: "Issued",
  sent: "Sent",
  paid: "Paid",
  overdue: "Overdue",
  void: "Void",
  accepted: "Accepted",
  declined: "Declined",
  expired: "Expired",
  converted: "Invoiced",
  issued: "Issued",
};
const statusLabel = (status: string): string => STATUS_LABELS[status] ?? status;

/** "0.0825" → "8.25 %": the decimal point moved two places, exactly. */
function displayTaxRate(rate: string): string {
  const [whole = "0", fraction = ""] = rate.split(".");
  const digits = fraction.padEnd(2, "0");
  const intPart = String(Number(whole) * 100 + Number(digits.slice(0, 2)));
  const rest = digits.slice(2).replace(/0+$/, "");
  return `${intPart}${rest ? `.${rest}` : ""} %`;
}

/** "4569.6" grouped as "4,569.60", without the currency (tax rows read "VAT 19 % on 3,840.00"). */
const plainAmount = (amount: string): string => displayMoney(amount, "").trimStart();

const TAX_LABELS: Record<TaxCategory, string> = {
  standard: "VAT",
  zero_rated: "VAT (zero-rated)",
  exempt: "VAT exempt",
  reverse_charge: "Reverse charge",
  intra_community: "Intra-community supply",
  export: "Export",
  outside_scope: "Outside the scope of VAT",
};

function taxRows(breakdown: readonly TaxBreakdownEntry[]): LabelledValue[] {
  return breakdown.map((entry) => ({
    label: `${TAX_LABELS[entry.taxCategory]} ${displayTaxRate(entry.taxRate)} on ${plainAmount(entry.taxableAmount)}`,
    value: plainAmount(entry.taxAmount),
  }));
}

const REASON_LABELS: Record<CreditNoteReason, string> = {
  duplicate: "Duplicate",
  order_change: "Order change",
  product_unsatisfactory: "Product unsatisfactory",
  fraudulent: "Fraudulent",
  other: "Other",
};
/** A credit note's `reason` as people read it, on its documents and in its e-invoice's note. */
export const creditNoteReasonLabel = (reason: CreditNoteReason): string => REASON_LABELS[reason];

const regionNames = new Intl.DisplayNames(["en"], { type: "region" });
/** "DE" → "Germany" for people; the code itself when the runtime has no name for it. */
const countryName = (code: string): string => {
  try {
    return regionNames.of(code) ?? code;
  } catch {
    return code;
  }
};

const printAddress = (address: Address | null): string[] => addressLines(address, countryName);

function sellerView(seller: Seller | null): PartyView | null {
  if (!seller || !(seller.businessName || seller.legalName)) return null;
  const name = seller.businessName ?? seller.legalName!;
  const details: LabelledValue[] = [];
  if (seller.taxId) details.push({ label: "VAT ID", value: seller.taxId });
  if (seller.companyId) details.push({ label: "Company no.", value: seller.companyId });
  if (seller.contactName) details.push({ label: "Contact", value: seller.contactName });
  if (seller.email) details.push({ label: "Email", value: seller.email });
  if (seller.phone) details.push({ label: "Phone", value: seller.phone });
  if (seller.website) details.push({ label: "Web", value: seller.website });
  return {
    name,
    legalName: seller.legalName && seller.legalName !== name ? seller.legalName : null,
    addressLines: printAddress(seller.address),
    details,
  };
}

function billToView(doc: Pick<Invoice, "clientName" | "clientEmail" | "clientAddress" | "clientTaxId">): PartyView {
  const details: LabelledValue[] = [];
  if (doc.clientTaxId) details.push({ label: "VAT ID", value: doc.clientTaxId });
  if (doc.clientEmail) details.push({ label: "Email", value: doc.clientEmail });
  return { name: doc.clientName, legalName: null, addressLines: printAddress(doc.clientAddress ?? null), details };
}

const displayQuantity = (quantity: string): string => quantity.replace(/\.00$/, "");

function lineViews(lines: readonly LineItem[], currency: string): DocumentView["lines"] {
  return [...lines]
    .sort((a, b) => a.sortOrder - b.sortOrder)
    .map((line) => ({
      description: line.description,
      quantity: displayQuantity(line.quantity),
      unitPrice: displayMoney(line.unitPrice, currency),
      taxRate: displayTaxRate(line.taxRate),
      amount: displayMoney(line.amount, currency),
    }));
}

const dateOnly = (value: string): string => displayDate(`${value}T00:00:00Z`);

/** What the view of any document takes from the document and the seller's assets alike. */
function commonView(
  doc: { status: string } & Pick<
    PublicEstimate,
    | "currency"
    | "lineItems"
    | "taxBreakdown"
    | "taxExemptionReason"
    | "notes"
    | "terms"
    | "clientName"
    | "clientEmail"
    | "clientAddress"
    | "clientTaxId"
  >,
  assets: DocumentAssets,
) {
  return {
    status: doc.status,
    statusLabel: statusLabel(doc.status),
    currency: doc.currency,
    logo: assets.logo,
    seller: sellerView(assets.seller),
    billTo: billToView(doc),
    lines: lineViews(doc.lineItems, doc.currency),
    taxRows: taxRows(doc.taxBreakdown),
    taxExemptionReason: doc.taxExemptionReason,
    notes: doc.notes,
    terms: doc.terms,
    footer: assets.seller?.footer ?? null,
  };
}

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

export function estimateView(estimate: PublicEstimate, assets: DocumentAssets): DocumentView {
  const money = (amount: string) => displayMoney(amount, estimate.currency);
  return {
    ...commonView(estimate, assets),
    kind: "estimate",
    title: estimate.estimateNumber ? `Estimate ${estimate.estimateNumber}` : "Estimate",
    reference: null,
    memo: null,
    number: estimate.estimateNumber,
    draft: estimate.status === "draft",
    facts: [
      { label: "Estimate no.", value: estimate.estimateNumber ?? "—" },
      { label: "Date", value: displayDate(estimate.sentAt ?? estimate.createdAt) },
      { label: "Valid until", value: displayDate(estimate.validUntil) },
    ],
    totals: [
      { label: "Subtotal", value: money(estimate.subtotal) },
      { label: "Tax", value: money(estimate.taxTotal) },
      { label: "Total", value: money(estimate.total), emphasis: true },
    ],
    payment: null,
    payLink: null,
  };
}

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
  creditNote: CreditNote,
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
