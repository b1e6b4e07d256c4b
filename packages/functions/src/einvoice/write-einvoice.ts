import type { FieldError } from "@invoicing/core/errors";
import type { Invoice } from "@invoicing/core/invoices/model";
import { writeCii } from "./cii";
import { toFacturX } from "./facturx";
import { buildModel } from "./model";
import { missingForEInvoice } from "./requirements";
import type { EInvoiceFormat, EInvoiceSource } from "./source";
import { writeEInvoiceXml } from "./write-xml";

/**
 * The e-invoice of an invoice in one of four formats (docs/e-invoices.md). Only the documents
 * function imports this module: the API function's bundle never carries it.
 */
export { missingForEInvoice } from "./requirements";
export { creditNoteSourceOf } from "./credit-note";
export { writeEInvoiceXml } from "./write-xml";

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

/** The writer's input: the invoice resource as the API shows it, and the link that pays it by card. */
export function eInvoiceSourceOf(invoice: Invoice): EInvoiceSource {
  return { ...invoice, payLink: invoice.cardProcessorPaymentLink ?? invoice.altProcessorPaymentLink ?? null };
}
