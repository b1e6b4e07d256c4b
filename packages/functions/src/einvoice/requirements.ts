import type { FieldError } from "@invoicing/core/errors";
import { isPlaced, isVatId } from "./model";
import { germanRules } from "./german-rules";
import { missingForPeppol } from "./peppol-rules";
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
    if (sellerAddress && !sellerAddress.line1) need("profile.address.line1", "XRechnung requires the seller's street");
    if (!source.clientEmail) need("client.email", "XRechnung requires the buyer's email, its electronic address");
    germanRules(source, need, "XRechnung");
  }
  if (format === "peppol") missingForPeppol(source, need);
  return errors;
}
