import { docs } from "../routes/docs";
import { pdfRoutes } from "../routes/pdf";
import { publicPages } from "../routes/public/routes";

/**
 * What the documents Lambda (lambda/documents.ts) serves: every path that renders a document — the
 * public HTML pages of invoices and estimates (Hono's JSX), their PDFs, private and public, and the
 * e-invoices — and the API's own description (GET /openapi.json, /docs): building it walks every
 * route and converts its schemas (@valibot/to-json-schema). Weight the API function's cold start
 * need not carry. infra/api.ts routes each of those paths (DOCUMENT_PATHS) to this one function; a
 * documents module added here must have its path there too (test/deploy checks both lists agree).
 */
export const documentRouteModules = [publicPages, pdfRoutes, docs] as const;
