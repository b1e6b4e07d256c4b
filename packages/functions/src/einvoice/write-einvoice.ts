import type { CreditNote } from "@invoicing/core/credit-notes/resource";
import type { FieldError } from "@invoicing/core/errors";
import type { Invoice } from "@invoicing/core/invoices/model";
import type { PeppolAddresses } from "@invoicing/core/peppol/addresses";
import { writeCii } from "./cii";
import type { CreditedInvoice } from "./credit-note";
import { toFacturX } from "./facturx";
import { buildModel } from "./model";
import { missingForEInvoice } from "./requirements";
import type { EInvoiceFormat, EInvoiceSource } from "./source";
import { writeEInvoiceXml } from "./write-xml";

/**
 * The e-invoice of a document in any of the formats (docs/e-invoices.md): checked, then written,
 * Factur-X's PDF included. Only the functions that serve documents load this module, at their
 * first e-invoice (http/einvoice-writer.ts): the API function's bundle never carries it. What
 * writes only XML (the Peppol hand-over) imports write-xml.ts, without Factur-X's pdf-lib.
 */

/** What the apps hand the writer: an invoice, or a credit note with what it takes from its invoice. */
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
) => Promise<EInvoiceOutcome>;

const E_INVOICE_MEDIA: Record<EInvoiceFormat, { contentType: string; extension: string }> = {
  ubl: { contentType: "application/xml", extension: "xml" },
  cii: { contentType: "application/xml", extension: "xml" },
  xrechnung: { contentType: "application/xml", extension: "xml" },
  facturx: { contentType: "application/pdf", extension: "pdf" },
  peppol: { contentType: "application/xml", extension: "xml" },
};

type EInvoiceOutcome =
  | { ok: true; body: string | Uint8Array; contentType: string; extension: string }
  | { ok: false; errors: FieldError[] };

/**
 * Checks first, then writes. Factur-X needs the invoice's PDF: `renderPdf` is called only when
 * the invoice is complete, so an incomplete one costs no rendering.
 */
export async function writeEInvoice(
  source: EInvoiceSource,
  format: EInvoiceFormat,
  renderPdf: () => Promise<Uint8Array>,
  now: Date,
): Promise<EInvoiceOutcome> {
  const errors = missingForEInvoice(source, format);
  if (errors.length > 0) return { ok: false, errors };
  const media = E_INVOICE_MEDIA[format];
  if (format !== "facturx") return { ok: true, body: writeEInvoiceXml(source, format), ...media };
  const cii = writeCii(buildModel(source, "facturx"));
  const title = `${source.correcting ? "Credit note" : "Invoice"} ${source.invoiceNumber}`;
  const pdf = await toFacturX(await renderPdf(), cii, { title, now });
  return { ok: true, body: pdf, ...media };
}
