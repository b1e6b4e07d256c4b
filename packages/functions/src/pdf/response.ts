import type { Context } from "hono";
import type { DocumentView } from "@invoicing/core/public/view";
import type { AppEnv } from "../env";

/** An `application/pdf` response of a document view, named after its number. */
export async function pdfResponse(c: Context<AppEnv>, view: DocumentView): Promise<Response> {
  // pdf-lib is loaded at the first PDF, not at import: it is the heaviest dependency and most
  // requests never render one, so the API Lambda's cold start does not pay for it.
  const { renderDocumentPdf } = await import("./document-pdf");
  const bytes = await renderDocumentPdf(view, { now: c.get("deps").clock() });
  const name = `${(view.number ?? `${view.kind}-draft`).replace(/[^A-Za-z0-9_-]/g, "_")}.pdf`;
  return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
    "Content-Type": "application/pdf",
    "Content-Disposition": `inline; filename="${name}"`,
  });
}
