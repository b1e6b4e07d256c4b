import type { Context } from "hono";
import type { DocumentView } from "@invoicing/core/capabilities/document-view";
import type { AppEnv } from "./app-env";

/**
 * An `application/pdf` response of a document view, named after its number. The renderer comes
 * from the app (http/pdf-renderer.ts, mounted by the functions that serve PDFs), not from an import:
 * the PDF routes are loaded wherever the OpenAPI document is built, pdf-lib only where PDFs are drawn.
 */
export async function pdfResponse(c: Context<AppEnv>, view: DocumentView): Promise<Response> {
  const render = c.get("renderPdf");
  if (!render)
    throw new Error("this app draws no PDFs: mount http/pdf-renderer.ts's pdfRenderer before the PDF routes");
  const bytes = await render(view, { now: c.get("deps").clock() });
  const name = `${(view.number ?? `${view.kind}-draft`).replace(/[^A-Za-z0-9_-]/g, "_")}.pdf`;
  return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
    "Content-Type": "application/pdf",
    "Content-Disposition": `inline; filename="${name}"`,
  });
}
