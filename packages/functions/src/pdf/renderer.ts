import { Hono } from "hono";
import type { AppEnv } from "../env";
import type { RenderPdf } from "./response";

// pdf-lib is loaded at the first PDF, not at import: it is the heaviest dependency and most
// requests never render one.
const render: RenderPdf = async (view, options) => (await import("./document-pdf")).renderDocumentPdf(view, options);

/**
 * Gives an app its PDF renderer (pdf/response.ts reads it). Mounted, before the PDF routes, only by
 * the apps that serve PDFs (documents-api.ts, app.ts): a bundle that does not import this module does not
 * hold pdf-lib, even though it holds the PDF routes' descriptions (GET /openapi.json walks them).
 */
export const pdfRenderer = new Hono<AppEnv>().use("*", async (c, next) => {
  c.set("renderPdf", render);
  await next();
});
