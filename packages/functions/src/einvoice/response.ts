import type { Context } from "hono";
import type { FieldError } from "@invoicing/core/errors";
import type { Invoice } from "@invoicing/core/invoices/model";
import { documentAssets } from "@invoicing/core/public/assets";
import { invoiceView } from "@invoicing/core/public/view";
import type { AppEnv } from "../http/env";
import { HttpProblem } from "../http/problems";
import type { EInvoiceFormat } from "./source";

/**
 * The HTTP side of the e-invoices, light enough for any bundle: the writer itself (XML, pdf-lib)
 * reaches the route through the app (einvoice/writer.ts), mounted only by the functions that serve
 * documents, exactly as the PDF renderer does.
 */
export type WriteEInvoice = (
  invoice: Invoice,
  format: EInvoiceFormat,
  renderPdf: () => Promise<Uint8Array>,
  now: Date,
) => Promise<
  { ok: true; body: string | Uint8Array; contentType: string; extension: string } | { ok: false; errors: FieldError[] }
>;

/** The e-invoice of a non-draft invoice, or 422 e_invoice_incomplete naming every missing field. */
export async function eInvoiceResponse(
  c: Context<AppEnv>,
  invoice: Invoice,
  userId: string,
  format: EInvoiceFormat,
): Promise<Response> {
  const write = c.get("writeEInvoice");
  const render = c.get("renderPdf");
  if (!write || !render) throw new Error("this app writes no e-invoices: mount einvoice/writer.ts and pdf/renderer.ts");
  const deps = c.get("deps");
  const now = deps.clock();
  // Factur-X is the invoice PDF itself: drawn (with the seller and logo, its fonts embedded as
  // PDF/A requires) only when the format needs it.
  const pdf = async () =>
    render(invoiceView(invoice, await documentAssets(deps, userId, invoice), deps), { now, archival: true });
  const outcome = await write(invoice, format, pdf, now);
  if (!outcome.ok) {
    const detail = `the ${format} e-invoice needs: ${outcome.errors.map((e) => e.path).join(", ")}`;
    throw new HttpProblem("e_invoice_incomplete", detail.slice(0, 1000), {}, outcome.errors);
  }
  const name = `${(invoice.invoiceNumber ?? "invoice").replace(/[^A-Za-z0-9_-]/g, "_")}.${outcome.extension}`;
  const body = typeof outcome.body === "string" ? outcome.body : (outcome.body as Uint8Array<ArrayBuffer>);
  return c.body(body, 200, {
    "Content-Type": outcome.contentType === "application/xml" ? "application/xml; charset=utf-8" : outcome.contentType,
    "Content-Disposition": `attachment; filename="${name}"`,
  });
}
