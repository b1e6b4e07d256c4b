import type { FieldError } from "@invoicing/core/errors";
import type { Invoice } from "@invoicing/core/invoices/model";
import type { EInvoiceFormat } from "./source";

/** Writes an invoice as an e-invoice of `format`, or names every field it is missing. */
export type WriteEInvoice = (
  invoice: Invoice,
  format: EInvoiceFormat,
  renderPdf: () => Promise<Uint8Array>,
  now: Date,
) => Promise<
  { ok: true; body: string | Uint8Array; contentType: string; extension: string } | { ok: false; errors: FieldError[] }
>;
