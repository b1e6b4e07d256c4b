import type { EInvoiceSource } from "./source";

/** Records one missing field (requirements.ts collects them all). */
export type Need = (path: string, message: string) => void;

/**
 * Germany's rules, as XRechnung has them (BR-DE-…) and as Peppol BIS applies them between a German
 * seller and a German buyer (DE-R-…, the same numbers): the buyer reference (the Leitweg-ID), the
 * seller's city, postal code and contact, the buyer's city and postal code, payment instructions,
 * and the discount (Skonto) syntax of the payment terms.
 */
export function germanRules(source: EInvoiceSource, need: Need, format: string): void {
  const seller = source.seller;
  const sellerAddress = seller?.address ?? null;
  const clientAddress = source.clientAddress;
  if (!source.buyerReference) {
    const path = source.correcting ? "invoice.buyerReference" : "buyerReference";
    need(path, `${format} requires the buyer reference (Leitweg-ID) (BR-DE-15)`);
  }
  if (sellerAddress) {
    if (!sellerAddress.city) need("profile.address.city", `${format} requires the seller's city (BR-DE-3)`);
    if (!sellerAddress.postalCode)
      need("profile.address.postalCode", `${format} requires the seller's postal code (BR-DE-4)`);
  }
  if (!seller?.contactName) need("profile.contactName", `${format} requires the seller's contact name (BR-DE-5)`);
  if (!seller?.phone) need("profile.phone", `${format} requires the seller's phone number (BR-DE-6)`);
  else if (!/(\d.*){3,}/.test(seller.phone)) need("profile.phone", "must contain at least three digits (BR-DE-27)");
  if (!seller?.email) need("profile.email", `${format} requires the seller's email (BR-DE-7)`);
  if (clientAddress) {
    if (!clientAddress.city) need("client.address.city", `${format} requires the buyer's city (BR-DE-8)`);
    if (!clientAddress.postalCode)
      need("client.address.postalCode", `${format} requires the buyer's postal code (BR-DE-9)`);
  }
  if (!seller?.bankAccount && !source.payLink) {
    need("profile.bankAccount", `${format} requires payment instructions: a bank account or card payments (BR-DE-1)`);
  }
  const badSkonto = skontoProblem(source.terms);
  if (badSkonto) need("terms", badSkonto);
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
