import type { Address } from "@invoicing/core/address/address";
import type { LineItem, TaxBreakdownEntry, TaxCategory } from "@invoicing/core/documents/line-items";
import type { Invoice } from "@invoicing/core/invoices/model";
import type { BankAccount, Seller } from "@invoicing/core/profile/profile";

/**
 * What an e-invoice is written from: the public Invoice resource as the API returns it (money as
 * two-decimal strings, `seller` the profile snapshot taken at finalize, the client's copies), plus
 * the pay link when a card processor is configured. The writer depends on this shape only, never
 * on the stored item, so it reads exactly what the user sees on GET /invoices/{id}. Its types are
 * core's: what a format needs beyond them (a seller, addresses with a country, …) is what the
 * completeness check (requirements.ts) asks for before anything is written.
 */
export type { Address, BankAccount, Seller, TaxBreakdownEntry, TaxCategory };
export type SourceLine = LineItem;

export type EInvoiceSource = Pick<
  Invoice,
  | "invoiceNumber"
  | "status"
  | "currency"
  | "issueDate"
  | "dueDate"
  | "deliveryDate"
  | "notes"
  | "terms"
  | "buyerReference"
  | "purchaseOrderReference"
  | "taxExemptionReason"
  | "subtotal"
  | "taxTotal"
  | "total"
  | "amountPaid"
  | "clientName"
  | "clientEmail"
  | "clientAddress"
  | "clientTaxId"
  | "seller"
  | "lineItems"
  | "taxBreakdown"
> & {
  /** The link that opens a card payment (the invoice's pay link), when a card processor is set. */
  payLink?: string | null;
  /**
   * Set for a credit note (type code 381): the invoice it corrects, BG-3 (BT-25 its number, BT-26
   * its issue date). Absent or null: an invoice (380). A credit note's source is built by
   * `creditNoteSourceOf` (credit-note.ts): its own number, lines and totals in the invoice's places.
   */
  correcting?: { invoiceNumber: string; issueDate: string } | null;
  /**
   * The parties' Peppol participant identifiers (API.md section 19), `"<scheme>:<identifier>"`, as
   * the profile and the client hold them when the e-invoice is written (routing addresses, not
   * content the invoice froze: a business that registers after finalizing is reachable at once).
   * When set they are the electronic addresses (BT-34, BT-49) of every UBL and CII format.
   */
  sellerPeppolId?: string | null;
  buyerPeppolId?: string | null;
};

export const E_INVOICE_FORMATS = ["ubl", "cii", "xrechnung", "facturx", "peppol"] as const;
export type EInvoiceFormat = (typeof E_INVOICE_FORMATS)[number];

/** The writer's input: the invoice resource as the API shows it, and the link that pays it by card. */
export function eInvoiceSourceOf(invoice: Invoice): EInvoiceSource {
  return { ...invoice, payLink: invoice.cardProcessorPaymentLink ?? invoice.altProcessorPaymentLink ?? null };
}
