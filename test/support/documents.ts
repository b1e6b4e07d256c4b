import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import type { TestEnv, TestUser } from "./env";

/** A complete seller, a buyer with a long address and lines at two VAT rates: the documents tests' world. */
export const SELLER = {
  businessName: "Northwind Studio",
  legalName: "Northwind Studio GmbH",
  address: { line1: "Torstraße 1", line2: "Hinterhaus, 3. OG", city: "Berlin", postalCode: "10119", country: "DE" },
  taxId: "DE123456789",
  companyId: "HRB 12345 B",
  contactName: "Ada Muster",
  email: "billing@northwind.test",
  phone: "+49 30 1234567",
  website: "https://northwind.test",
  bankAccount: { accountName: "Northwind Studio GmbH", iban: "DE89370400440532013000", bic: "COBADEFFXXX" },
  footer: "Northwind Studio GmbH · Geschäftsführerin Ada Muster · Amtsgericht Charlottenburg HRB 12345 B",
};
export const BUYER = {
  name: "Acme Handelsgesellschaft mbH & Co. KG",
  email: "ap@acme.test",
  paymentTermsDays: 14,
  taxId: "DE987654321",
  address: {
    line1: "Abteilung Kreditorenbuchhaltung, Rechnungseingang Zentrale",
    line2: "Industriestraße 117–121, Gebäude C, Tor 4",
    city: "Frankfurt am Main",
    postalCode: "60311",
    region: "Hessen",
    country: "DE",
  },
};
/** A client in another EU country than the seller's, giving only the address fields it must. */
export const FRENCH_CLIENT = {
  name: "Acme SARL",
  email: "ap@acme.test",
  taxId: "FR40303265045",
  address: { line1: "12 rue de la Paix", city: "Paris", postalCode: "75002", country: "FR" },
};
export const LINES = [
  { description: "Brand identity: logo, colours, typography", quantity: "32", unitPrice: "120.00", taxRate: "0.19" },
  { description: "Printed style guide (books)", quantity: "2", unitPrice: "35.00", taxRate: "0.07" },
  { description: "Hosting, 12 months", quantity: "1", unitPrice: "240.00", taxRate: "0.19" },
];

/** The seller's logo (360 × 120 PNG). */
const LOGO = readFileSync(join(import.meta.dirname, "../fixtures/logo.png"));

/**
 * A new user of `env` set up as SELLER (its profile, and its logo unless `logo: false`) with BUYER as
 * a client: where each documents test (PDF, email, public page) starts.
 */
export async function sellerWithBuyer(
  env: TestEnv,
  options: { logo?: boolean } = {},
): Promise<{ user: TestUser; clientId: number }> {
  const user = await env.user();
  expect((await user.call("PATCH", "/profile", SELLER)).status).toBe(200);
  if (options.logo ?? true) {
    const upload = await env.app.request("http://localhost/profile/logo", {
      method: "PUT",
      body: LOGO,
      headers: { Authorization: `Bearer ${user.key}`, "Content-Type": "image/png" },
    });
    expect(upload.status).toBe(204);
  }
  const client = await user.call("POST", "/clients", BUYER);
  expect(client.status).toBe(201);
  return { user, clientId: client.body.id };
}
