import { Hono } from "hono";
import type { AppEnv } from "./app-env";
import { creditNoteSourceOf } from "../einvoice/credit-note";
import { eInvoiceSourceOf } from "../einvoice/source";
import type { WriteEInvoice } from "../einvoice/write-einvoice";

// The writer (and pdf-lib with it) is loaded at the first e-invoice, not when the app starts.
const write: WriteEInvoice = async (document, format, renderPdf, now) => {
  const { writeEInvoice } = await import("../einvoice/write-einvoice");
  const source =
    document.kind === "invoice"
      ? eInvoiceSourceOf(document.invoice)
      : creditNoteSourceOf(document.creditNote, document.invoice);
  const addressed = { ...source, sellerPeppolId: document.peppol?.seller, buyerPeppolId: document.peppol?.buyer };
  return writeEInvoice(addressed, format, renderPdf, now);
};

/**
 * Gives an app its e-invoice writer (http/einvoice-response.ts reads it). Mounted before the document
 * routes only by the apps that serve documents (lambda/documents.ts, app/create-app.ts), so the API function's bundle,
 * which holds the routes' descriptions for GET /openapi.json, never holds the writer.
 */
export const eInvoiceWriter = new Hono<AppEnv>().use("*", async (c, next) => {
  c.set("writeEInvoice", write);
  await next();
});
