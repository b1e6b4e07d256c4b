import type { FieldError } from "@invoicing/core/errors";
import { isPlaced, isVatId } from "./model";
import type { EInvoiceFormat, EInvoiceSource, TaxCategory } from "./source";

/**
 * What a format needs that the invoice may lack, checked before any XML is written. Each missing
 * field is named where the user sets it: `profile.<field>` for the seller (the snapshot taken at
 * finalize), `client.<field>` for the buyer (the copies taken at finalize), or the invoice's own
 * field. Returns every problem at once, so one round of fixes is enough. The business rules cited
 * are EN 16931's (BR-…) and XRechnung's (BR-DE-…); docs/e-invoices.md lists them. A credit note
 * needs what its invoice would (same parties, same categories); the one field it takes from its
 * invoice, the buyer reference, is named `invoice.buyerReference`.
 */
export function missingForEInvoice(source: EInvoiceSource, format: EInvoiceFormat): FieldError[] {
  const errors: FieldError[] = [];
  const need = (path: string, message: string) => errors.push({ path, message });
  const seller = source.seller;
  const sellerAddress = seller?.address ?? null;
  const clientAddress = source.clientAddress;
  const categories = new Set<TaxCategory>(source.lineItems.map((l) => l.taxCategory));
  const has = (...cs: TaxCategory[]) => cs.some((c) => categories.has(c));

  // EN 16931: the parties (BR-6, BR-8, BR-9, BR-10, BR-11).
  if (!seller?.legalName && !seller?.businessName) need("profile.businessName", "the seller's name is required");
  if (!sellerAddress) need("profile.address", "the seller's address (at least its country) is required");
  else if (!isPlaced(sellerAddress)) need("profile.address.country", "the seller's country is required");
  if (!clientAddress) need("client.address", "the buyer's address (at least its country) is required");
  // A client address stored as free text before addresses were structured has no country.
  else if (!isPlaced(clientAddress)) need("client.address.country", "the buyer's country is required");
  if (source.lineItems.length === 0) need("lineItems", "an e-invoice needs at least one line");

  // The seller's tax identifier for every taxed or exempted supply (BR-S-02, BR-Z-02, BR-E-02, …);
  // a VAT identifier with its country prefix where the rule admits no other number (BR-AE-02,
  // BR-IC-02, BR-G-02).
  const vatOnly = has("reverse_charge", "intra_community", "export");
  if (has("standard", "zero_rated", "exempt") || vatOnly) {
    if (!seller?.taxId)
      need("profile.taxId", "the seller's VAT identifier is required for the invoice's tax categories");
    else if (vatOnly && !isVatId(seller.taxId)) {
      need(
        "profile.taxId",
        "must be a VAT identifier starting with its country code (reverse charge, intra-community, export)",
      );
    }
  }
  // The buyer's VAT identifier when the buyer accounts for the tax (BR-AE-02, BR-IC-02).
  if (has("reverse_charge", "intra_community")) {
    if (!source.clientTaxId)
      need("client.taxId", "the buyer's VAT identifier is required for reverse charge and intra-community supplies");
    else if (has("intra_community") && !isVatId(source.clientTaxId)) {
      need("client.taxId", "must be a VAT identifier starting with its country code (intra-community supply)");
    }
  }
  // An exemption needs its reason (BR-E-10, BR-AE-10, BR-IC-10, BR-G-10, BR-O-10).
  if (has("exempt", "reverse_charge", "intra_community", "export", "outside_scope") && !source.taxExemptionReason) {
    need("taxExemptionReason", "the reason for the exemption is required for the invoice's tax categories");
  }
  // "Not subject to VAT" cannot share an invoice with any other category (BR-O-11 to BR-O-14).
  if (categories.has("outside_scope") && categories.size > 1) {
    need(
      "lineItems",
      "lines not subject to VAT (outside_scope) cannot be mixed with other tax categories in an e-invoice",
    );
  }

  if (format === "xrechnung") {
    if (!source.buyerReference) {
      const path = source.correcting ? "invoice.buyerReference" : "buyerReference";
      need(path, "XRechnung requires the buyer reference (Leitweg-ID) (BR-DE-15)");
    }
    if (sellerAddress) {
      if (!sellerAddress.line1) need("profile.address.line1", "XRechnung requires the seller's street");
      if (!sellerAddress.city) need("profile.address.city", "XRechnung requires the seller's city (BR-DE-3)");
      if (!sellerAddress.postalCode)
        need("profile.address.postalCode", "XRechnung requires the seller's postal code (BR-DE-4)");
    }
    if (!seller?.contactName) need("profile.contactName", "XRechnung requires the seller's contact name (BR-DE-5)");
    if (!seller?.phone) need("profile.phone", "XRechnung requires the seller's phone number (BR-DE-6)");
    else if (!/(\d.*){3,}/.test(seller.phone)) need("profile.phone", "must contain at least three digits (BR-DE-27)");
    if (!seller?.email)
      need("profile.email", "XRechnung requires the seller's email, its electronic address (BR-DE-7)");
    if (!source.clientEmail) need("client.email", "XRechnung requires the buyer's email, its electronic address");
    if (clientAddress) {
      if (!clientAddress.city) need("client.address.city", "XRechnung requires the buyer's city (BR-DE-8)");
      if (!clientAddress.postalCode)
        need("client.address.postalCode", "XRechnung requires the buyer's postal code (BR-DE-9)");
    }
    if (!seller?.bankAccount && !source.payLink) {
      need("profile.bankAccount", "XRechnung requires payment instructions: a bank account or card payments (BR-DE-1)");
    }
    const badSkonto = skontoProblem(source.terms);
    if (badSkonto) need("terms", badSkonto);
  }
  return errors;
}

// XRechnung's discount (Skonto) line: #SKONTO#TAGE=14#PROZENT=2.00# with an optional
// #BASISBETRAG=123.45# before the last "#", and a line break after the last such line (BR-DE-18).
const SKONTO = /^#SKONTO#TAGE=\d+#PROZENT=\d+\.\d{2}(#BASISBETRAG=-?\d+\.\d{2})?#$/;

function skontoProblem(terms: string | null): string | null {
  if (!terms) return null;
  const lines = terms.split(/\r?\n/);
  const marked = lines.filter((line) => line.trim().startsWith("#"));
  if (marked.length === 0) return null;
  const bad = marked.find((line) => !SKONTO.test(line.trim().replace(/\s+/g, " ")));
  if (bad)
    return `a line starting with "#" must follow XRechnung's Skonto syntax (#SKONTO#TAGE=14#PROZENT=2.00#): "${bad.slice(0, 60)}"`;
  if (!/#\s*\n/.test(terms.slice(terms.lastIndexOf("#")))) return "the last Skonto line must end with a line break";
  return null;
}
