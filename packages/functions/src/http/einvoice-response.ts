import type { Context } from "hono";
import type { DocumentView } from "@invoicing/core/capabilities/document-view";
import type { AppEnv } from "./app-env";
import { HttpProblem } from "./problems";
import type { EInvoiceFormat } from "../einvoice/source";
import type { EInvoiceDocument } from "../einvoice/write-einvoice";

/**
 * The HTTP side of the e-invoices, light enough for any bundle: the writer itself (XML, pdf-lib)
 * reaches the route through the app (http/einvoice-writer.ts), mounted only by the functions that serve
 * documents, exactly as the PDF renderer does.
 *
 * The e-invoice of an issued invoice or a credit note, named after its number, or 422
 * e_invoice_incomplete naming every missing field. `view`: the document's view, drawn as the
 * Factur-X PDF only when that format is asked for.
 */
export async function eInvoiceResponse(
  c: Context<AppEnv>,
  document: EInvoiceDocument,
  view: () => Promise<DocumentView>,
  format: EInvoiceFormat,
): Promise<Response> {
  const write = c.get("writeEInvoice");
  const render = c.get("renderPdf");
  if (!write || !render)
    throw new Error("this app writes no e-invoices: mount http/einvoice-writer.ts and http/pdf-renderer.ts");
  const now = c.get("deps").clock();
  // Factur-X is the document's PDF itself: drawn (with the seller and logo, its fonts embedded as
  // PDF/A requires) only when the format needs it.
  const pdf = async () => render(await view(), { now, archival: true });
  const outcome = await write(document, format, pdf, now);
  if (!outcome.ok) {
    const detail = `the ${format} e-invoice needs: ${outcome.errors.map((e) => e.path).join(", ")}`;
    throw new HttpProblem("e_invoice_incomplete", detail.slice(0, 1000), {}, outcome.errors);
  }
  const number = document.kind === "invoice" ? document.invoice.invoiceNumber : document.creditNote.creditNoteNumber;
  const name = `${(number ?? "invoice").replace(/[^A-Za-z0-9_-]/g, "_")}.${outcome.extension}`;
  const body = typeof outcome.body === "string" ? outcome.body : (outcome.body as Uint8Array<ArrayBuffer>);
  return c.body(body, 200, {
    "Content-Type": outcome.contentType === "application/xml" ? "application/xml; charset=utf-8" : outcome.contentType,
    "Content-Disposition": `attachment; filename="${name}"`,
  });
}
