import type { CreditNote } from "@invoicing/core/credit-notes/resource";
import type { FieldError } from "@invoicing/core/errors";
import type { Invoice } from "@invoicing/core/invoices/model";
import type { PeppolAddresses } from "@invoicing/core/peppol/addresses";
import type { CreditedInvoice } from "./credit-note";
import type { EInvoiceFormat } from "./source";

export type EInvoiceDocument = (
  | { kind: "invoice"; invoice: Invoice }
  /** A credit note (type 381) and what its e-invoice takes from the invoice it corrects. */
  | { kind: "credit_note"; creditNote: CreditNote; invoice: CreditedInvoice }
) & {
  /** The parties' Peppol identifiers now (core/src/peppol/addresses.ts), the electronic addresses. */
  peppol?: PeppolAddresses;
};

/** Writes an invoice or a credit note as an e-invoice of `format`, or names every field it is missing. */
export type WriteEInvoice = (
  document: EInvoiceDocument,
  format: EInvoiceFormat,
  renderPdf: () => Promise<Uint8Array>,
  now: Date,
) => Promise<
  { ok: true; body: string | Uint8Array; contentType: string; extension: string } | { ok: false; errors: FieldError[] }
>;
