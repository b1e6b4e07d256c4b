import { addressLines, type Address } from "../address/address";
import type { DocumentView, LabelledValue, Logo, PartyView } from "../capabilities/document-view";
import type { LineItem, TaxBreakdownEntry, TaxCategory } from "./line-items";
import { displayDate, displayMoney } from "./display";
import type { Seller } from "../profile/profile";

/**
 * What the views of invoices, estimates and credit notes share (each document's own view is in its
 * folder: invoices/view.ts, estimates/view.ts, credit-notes/view.ts): the parties, lines, tax rows
 * and labels, from the document and the seller's assets alike.
 */
/** What a document shows besides itself: the seller (its snapshot, or the current profile) and the logo. */
export interface DocumentAssets {
  seller: Seller | null;
  logo: Logo | null;
}

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

function billToView(doc: {
  clientName: string;
  clientEmail: string | null;
  clientAddress?: Address | null;
  clientTaxId: string | null;
}): PartyView {
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

/**
 * What an invoice or credit note keeps of its Peppol send for its documents: `peppolDelivery`, and
 * `peppolDeliveredTo`, the participant it was delivered to (stored with the outcome by
 * peppol/delivery.ts, internal: a later edit of the client's `peppolId` does not change what the
 * document says was done).
 */
export interface PeppolSent {
  peppolDelivery?: { status: string } | null;
  peppolDeliveredTo?: string | null;
}

/** "Sent via Peppol to <peppolId>" once delivered; null before, after a failure, or for an estimate. */
const deliveryLine = (doc: PeppolSent): string | null =>
  doc.peppolDelivery?.status === "delivered" && doc.peppolDeliveredTo
    ? `Sent via Peppol to ${doc.peppolDeliveredTo}`
    : null;

export const dateOnly = (value: string): string => displayDate(`${value}T00:00:00Z`);

/** What the view of any document takes from the document and the seller's assets alike. */
export function commonView(
  doc: {
    status: string;
    currency: string;
    lineItems: readonly LineItem[];
    taxBreakdown: readonly TaxBreakdownEntry[];
    taxExemptionReason: string | null;
    notes: string | null;
    terms: string | null;
    clientName: string;
    clientEmail: string | null;
    clientAddress?: Address | null;
    clientTaxId: string | null;
  } & PeppolSent,
  assets: DocumentAssets,
) {
  return {
    status: doc.status,
    statusLabel: statusLabel(doc.status),
    currency: doc.currency,
    logo: assets.logo,
    seller: sellerView(assets.seller),
    billTo: billToView(doc),
    delivery: deliveryLine(doc),
    lines: lineViews(doc.lineItems, doc.currency),
    taxRows: taxRows(doc.taxBreakdown),
    taxExemptionReason: doc.taxExemptionReason,
    notes: doc.notes,
    terms: doc.terms,
    footer: assets.seller?.footer ?? null,
  };
}
