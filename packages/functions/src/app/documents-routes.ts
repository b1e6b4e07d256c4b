import { docs } from "../routes/docs";
import { pdfRoutes } from "../routes/pdf";
import { publicPages } from "../routes/public/routes";

/**
 * What the documents Lambda (lambda/documents.ts) serves: every path that renders a document — the
 * public HTML pages of invoices and estimates (Hono's JSX), their PDFs, private and public, and the
 * e-invoices — and the API's own description (GET /openapi.json, /docs): building it walks every
 * route and converts its schemas (@valibot/to-json-schema). Weight the API function's cold start
 * need not carry. infra/api.ts routes each of their paths to this one function, read from these
 * modules (app/function-paths.ts).
 */
export const documentRouteModules = [publicPages, pdfRoutes, docs] as const;
