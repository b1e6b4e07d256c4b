import { centsOf } from "@invoicing/core/money/money";
import { germanRules, type Need } from "./german-rules";
import { isVatId, percentOf } from "./model";
import type { EInvoiceSource } from "./source";

/**
 * What Peppol BIS Billing 3.0 needs beyond EN 16931 (API.md section 19), read from its rules
 * (OpenPEPPOL PEPPOL-EN16931-UBL, release 3.0.19; the ids are the rules' own): both parties'
 * Peppol identifiers as their electronic addresses, a buyer or order reference, and the country
 * rules that bind a seller of that country (and sometimes its buyer). Each missing field is named
 * where the user sets it, as for every format (requirements.ts).
 */
export function missingForPeppol(source: EInvoiceSource, need: Need): void {
  const seller = source.seller;
  const sellerCountry = seller?.address?.country ?? null;
  const buyerCountry = source.clientAddress?.country ?? null;
  const sellerVat = seller?.taxId && isVatId(seller.taxId) ? seller.taxId : null;
  const invoiceField = (field: string) => (source.correcting ? `invoice.${field}` : field);

  // PEPPOL-EN16931-R020 / R010: the parties' electronic addresses, which route the document.
  if (!source.sellerPeppolId)
    need("profile.peppolId", "Peppol requires the seller's Peppol identifier, its electronic address (R020)");
  if (!source.buyerPeppolId)
    need("client.peppolId", "Peppol requires the buyer's Peppol identifier, its electronic address (R010)");
  // PEPPOL-EN16931-R003: the buyer knows the invoice by one of the two.
  if (!source.buyerReference && !source.purchaseOrderReference) {
    need(
      invoiceField("buyerReference"),
      "Peppol requires a buyer reference or a purchase order reference (PEPPOL-EN16931-R003)",
    );
  }

  // A German seller and a German buyer: Germany's rules (DE-R-…), which are XRechnung's.
  if (sellerCountry === "DE" && buyerCountry === "DE") germanRules(source, need, "Peppol between German parties");

  // The Netherlands (NL-R-002 … NL-R-008).
  if (sellerCountry === "NL") {
    addressLines(source.seller?.address ?? null, "profile", need, "a Dutch seller (NL-R-002)");
    if (seller?.companyId && !/^(\d{8}|\d{20})$/.test(seller.companyId))
      need(
        "profile.companyId",
        "a Dutch seller's registration must be its KvK (8 digits) or OIN (20 digits) (NL-R-003)",
      );
    const owed = !source.correcting && centsOf(source.total) - centsOf(source.amountPaid) > 0n;
    const bothDutch = buyerCountry === "NL";
    // A pay link is no payment means between Dutch parties (NL-R-008): only the bank account is.
    if (owed && !seller?.bankAccount && (bothDutch || !source.payLink))
      need("profile.bankAccount", "a Dutch seller's invoice needs payment instructions (NL-R-007, NL-R-008)");
    if (bothDutch) {
      addressLines(source.clientAddress, "client", need, "a Dutch buyer of a Dutch seller (NL-R-004)");
      if (source.clientTaxId && !isVatId(source.clientTaxId) && !/^(\d{8}|\d{20})$/.test(source.clientTaxId))
        need("client.taxId", "a Dutch buyer's registration must be its KvK (8 digits) or OIN (20 digits) (NL-R-005)");
    }
  }

  // Denmark: the CVR number as legal registration (DK-R-002, PEPPOL-COMMON-R042).
  if (sellerCountry === "DK" && !/^(DK)?\d{8}$/.test(seller?.companyId ?? ""))
    need("profile.companyId", "a Danish seller must give its CVR number (8 digits) (DK-R-002)");

  // Norway: a VAT number is NO, the organisation number and MVA (NO-R-001).
  if (sellerVat?.startsWith("NO") && !/^NO\d{9}MVA$/.test(sellerVat))
    need("profile.taxId", "a Norwegian VAT number is NO, the 9-digit organisation number and MVA (NO-R-001)");

  // Sweden (SE-R-001 … SE-R-006, SE-R-013).
  if (sellerCountry === "SE") {
    if (sellerVat?.startsWith("SE") && !/^SE\d{12}$/.test(sellerVat))
      need("profile.taxId", "a Swedish VAT number is SE and 12 digits (SE-R-001, SE-R-002)");
    if (seller?.companyId && !/^\d{10}$/.test(seller.companyId))
      need("profile.companyId", "a Swedish organisation number is 10 digits (SE-R-003, SE-R-004)");
    if (seller?.companyId && seller.taxId && !sellerVat)
      need("profile.taxId", "a Swedish seller's tax id must be its VAT number (SE-R-005)");
    if (sellerVat?.startsWith("SE")) {
      const bad = source.lineItems.find(
        (l) => l.taxCategory === "standard" && !["25", "12", "6"].includes(String(Number(percentOf(l.taxRate)))),
      );
      if (bad) need("lineItems", "a Swedish seller's standard VAT rate is 25 %, 12 % or 6 % (SE-R-006)");
    }
  }

  // Italy: the address lines, and a tax number of 11 to 16 letters or digits (IT-R-001 … IT-R-004).
  if (sellerCountry === "IT" || sellerVat?.startsWith("IT")) {
    addressLines(seller?.address ?? null, "profile", need, "an Italian seller (IT-R-002 … IT-R-004)");
    if (seller?.taxId && !sellerVat && !/^[A-Z0-9]{11,16}$/.test(seller.taxId))
      need("profile.taxId", "an Italian seller's tax number is 11 to 16 letters or digits (IT-R-001)");
  }

  // Iceland: the kennitala as legal registration, street and postal code (IS-R-002 … IS-R-005).
  if (sellerCountry === "IS") {
    if (!seller?.companyId) need("profile.companyId", "an Icelandic seller must give its kennitala (IS-R-002)");
    if (!seller?.address?.line1) need("profile.address.line1", "an Icelandic seller's street is required (IS-R-003)");
    if (!seller?.address?.postalCode)
      need("profile.address.postalCode", "an Icelandic seller's postal code is required (IS-R-003)");
    if (buyerCountry === "IS") {
      if (!source.clientTaxId || isVatId(source.clientTaxId))
        need("client.taxId", "an Icelandic buyer's kennitala is required between Icelandic parties (IS-R-004)");
      if (!source.clientAddress?.line1) need("client.address.line1", "the buyer's street is required (IS-R-005)");
      if (!source.clientAddress?.postalCode)
        need("client.address.postalCode", "the buyer's postal code is required (IS-R-005)");
    }
  }

  // Greece: Peppol invoices of Greek sellers carry myDATA's numbering and MARK (GR-R-001, GR-R-004),
  // which this service does not issue.
  if (sellerVat?.startsWith("EL") || sellerVat?.startsWith("GR") || sellerCountry === "GR") {
    need(
      "profile.taxId",
      "Peppol invoices of Greek sellers need myDATA numbering and a MARK (GR-R-001, GR-R-004), not supported",
    );
  }
}

/** Street, city and postal code of a party whose country's rules require them. */
function addressLines(
  address: EInvoiceSource["clientAddress"],
  party: "profile" | "client",
  need: Need,
  who: string,
): void {
  if (!address) return;
  if (!address.line1) need(`${party}.address.line1`, `the street is required for ${who}`);
  if (!address.city) need(`${party}.address.city`, `the city is required for ${who}`);
  if (!address.postalCode) need(`${party}.address.postalCode`, `the postal code is required for ${who}`);
}
