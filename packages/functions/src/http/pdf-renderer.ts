import { createRequire } from "node:module";
import { Hono } from "hono";
import type { AppEnv } from "./app-env";
import type { RenderPdf } from "../pdf/document-pdf";
import type { Fontkit } from "../pdf/fonts";

// pdf-lib is loaded at the first PDF, not at import: it is the heaviest dependency and most
// requests never render one. fontkit, which embeds fonts, only at the first archival PDF, and
// required (it is CommonJS): import() of it had Node scan its 900 KiB for named exports and wrap it
// as a module first, ~200 ms of a cold Factur-X's CPU (docs/benchmarks.md).
const render: RenderPdf = async (view, { archival, ...options }) => {
  const { renderDocumentPdf } = await import("../pdf/document-pdf");
  const fontkit = archival ? (createRequire(import.meta.url)("@pdf-lib/fontkit") as Fontkit) : undefined;
  return renderDocumentPdf(view, { ...options, fontkit });
};

/**
 * Gives an app its PDF renderer (http/pdf-response.ts reads it). Mounted, before the PDF routes, only by
 * the apps that serve PDFs (lambda/documents.ts, app/create-app.ts): a bundle that does not import this module does not
 * hold pdf-lib, even though it holds the PDF routes' descriptions (GET /openapi.json walks them).
 */
export const pdfRenderer = new Hono<AppEnv>().use("*", async (c, next) => {
  c.set("renderPdf", render);
  await next();
});
