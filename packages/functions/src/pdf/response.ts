import type { Context } from "hono";
import type { DocumentView } from "@invoicing/core/public/view";
import type { AppEnv } from "../env";
import { renderDocumentPdf } from "./document-pdf";

/** An `application/pdf` response of a document view, named after its number. */
export async function pdfResponse(c: Context<AppEnv>, view: DocumentView): Promise<Response> {
  const bytes = await renderDocumentPdf(view, { now: c.get("deps").clock() });
  const name = `${(view.number ?? `${view.kind}-draft`).replace(/[^A-Za-z0-9_-]/g, "_")}.pdf`;
  return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
    "Content-Type": "application/pdf",
    "Content-Disposition": `inline; filename="${name}"`,
  });
}
