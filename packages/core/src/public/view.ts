import type { Deps } from "../context";
import type { LineItem } from "../documents/line-items";
import { publicInvoicePayUrl } from "../email/links";
import { displayDate, displayMoney } from "../email/format";
import type { Estimate } from "../estimates/model";
import type { Invoice } from "../invoices/model";
import { centsOf, formatMoney } from "../money/money";

/**
 * What a client sees of an invoice or an estimate: the public page and the PDF render this same
 * view, so they cannot disagree, and it holds only what the client may see (no user id, no
 * internal keys, no other record). Values are display strings; user text stays raw here and is
 * escaped by each renderer (HTML escaping on the page, plain text in the PDF).
 */
export interface DocumentView {
  kind: "invoice" | "estimate";
  /** "Invoice INV-000001", "Estimate EST-000001", "Draft invoice". */
  title: string;
  number: string | null;
  status: string;
  statusLabel: string;
  draft: boolean;
  billedTo: { name: string; email: string | null };
  dates: { label: string; value: string }[];
  lines: { description: string; quantity: string; unitPrice: string; taxRate: string; amount: string }[];
  totals: { label: string; value: string; emphasis?: boolean }[];
  notes: string | null;
  terms: string | null;
  /** Where the pay button goes; null: no button. */
  payLink: string | null;
}

/** The estimate fields the public view reads, plus when it was sent. */
export type PublicEstimate = Pick<
  Estimate,
  "status" | "currency" | "subtotal" | "taxTotal" | "total" | "notes" | "terms" | "validUntil" | "clientName" | "clientEmail" | "lineItems" | "createdAt"
> & { estimateNumber: string | null; sentAt?: string | null };

const PAYABLE: readonly string[] = ["finalized", "sent", "overdue"];

/**
 * THE pay button's target, in one place: the card processor's link when there is one, else the
 * alternative processor's; none once the invoice is paid or void. (The card processor's own
 * checkout route can replace this without touching the page or the PDF.) Only https links: they
 * come from users, and a `javascript:` URL must never become a button.
 */
export function payLinkOf(
  invoice: Pick<Invoice, "status" | "publicToken" | "cardProcessorPaymentLink" | "altProcessorPaymentLink">,
  deps: Pick<Deps, "publicBaseUrl">,
): string | null {
  if (!PAYABLE.includes(invoice.status)) return null;
  // A checkout session expires after a day: the button goes through our /pay route, which reuses
  // the session while it is open and makes a new one after.
  if (invoice.cardProcessorPaymentLink) return publicInvoicePayUrl(deps, invoice.publicToken);
  const link = invoice.altProcessorPaymentLink;
  return link && /^https:\/\//i.test(link) ? link : null;
}

/** total − amountPaid, exact. */
export const amountDue = (invoice: Pick<Invoice, "total" | "amountPaid">): string =>
  formatMoney(centsOf(invoice.total) - centsOf(invoice.amountPaid ?? "0.00"));

const STATUS_LABELS: Record<string, string> = {
  draft: "Draft", finalized: "Issued", sent: "Sent", paid: "Paid", overdue: "Overdue", void: "Void",
  accepted: "Accepted", declined: "Declined", expired: "Expired", converted: "Invoiced",
};
const statusLabel = (status: string): string => STATUS_LABELS[status] ?? status;

/** "0.0825" → "8.25%": the decimal point moved two places, exactly. */
export function displayTaxRate(rate: string): string {
  const [whole = "0", fraction = ""] = rate.split(".");
  const digits = fraction.padEnd(2, "0");
  const intPart = String(Number(whole) * 100 + Number(digits.slice(0, 2)));
  const rest = digits.slice(2).replace(/0+$/, "");
  return `${intPart}${rest ? `.${rest}` : ""}%`;
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

export function invoiceView(invoice: Invoice, deps: Pick<Deps, "publicBaseUrl">): DocumentView {
  const money = (amount: string) => displayMoney(amount, invoice.currency);
  const draft = invoice.status === "draft";
  const dates = [
    { label: "Issued", value: displayDate(invoice.issueDate) },
    { label: "Due", value: displayDate(invoice.dueDate) },
  ];
  if (invoice.paidAt) dates.push({ label: "Paid", value: displayDate(invoice.paidAt) });
  const totals: DocumentView["totals"] = [
    { label: "Subtotal", value: money(invoice.subtotal) },
    { label: "Tax", value: money(invoice.taxTotal) },
    { label: "Total", value: money(invoice.total), emphasis: true },
  ];
  if (invoice.amountPaid !== "0.00") totals.push({ label: "Paid", value: money(invoice.amountPaid) });
  if (invoice.status !== "void") totals.push({ label: "Amount due", value: money(amountDue(invoice)), emphasis: true });
  return {
    kind: "invoice",
    title: invoice.invoiceNumber ? `Invoice ${invoice.invoiceNumber}` : "Draft invoice",
    number: invoice.invoiceNumber,
    status: invoice.status,
    statusLabel: statusLabel(invoice.status),
    draft,
    billedTo: { name: invoice.clientName, email: invoice.clientEmail },
    dates,
    lines: lineViews(invoice.lineItems, invoice.currency),
    totals,
    notes: invoice.notes,
    terms: invoice.terms,
    payLink: payLinkOf(invoice, deps),
  };
}

export function estimateView(estimate: PublicEstimate): DocumentView {
  const money = (amount: string) => displayMoney(amount, estimate.currency);
  return {
    kind: "estimate",
    title: estimate.estimateNumber ? `Estimate ${estimate.estimateNumber}` : "Estimate",
    number: estimate.estimateNumber,
    status: estimate.status,
    statusLabel: statusLabel(estimate.status),
    draft: estimate.status === "draft",
    billedTo: { name: estimate.clientName, email: estimate.clientEmail },
    dates: [
      { label: "Date", value: displayDate(estimate.sentAt ?? estimate.createdAt) },
      { label: "Valid until", value: displayDate(estimate.validUntil) },
    ],
    lines: lineViews(estimate.lineItems, estimate.currency),
    totals: [
      { label: "Subtotal", value: money(estimate.subtotal) },
      { label: "Tax", value: money(estimate.taxTotal) },
      { label: "Total", value: money(estimate.total), emphasis: true },
    ],
    notes: estimate.notes,
    terms: estimate.terms,
    payLink: null,
  };
}
