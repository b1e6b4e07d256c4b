import { pdfRoutes } from "./routes/pdf";

/**
 * What the documents Lambda (documents-api.ts) serves: every path that renders a document — the
 * invoice and estimate PDFs, private and public, and the e-invoices. infra/api.ts routes each of
 * those paths (DOCUMENT_PATHS) to this one function; a documents module added here must have its
 * path there too (test/deploy checks both lists agree).
 */
export const documentRouteModules = [pdfRoutes] as const;
