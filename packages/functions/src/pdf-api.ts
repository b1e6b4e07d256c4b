import { handle } from "hono/aws-lambda";
import { createDeps } from "./deps";
import { eInvoiceWriter } from "./einvoice/writer";
import { pdfRenderer } from "./pdf/renderer";
import { pdfRoutes } from "./routes/pdf";
import { buildApp } from "./spine";

/**
 * The PDF Lambda: API Gateway sends it the PDF and e-invoice paths (infra/api.ts), with the same spine
 * (auth, errors, 405) as the API. Its own function keeps pdf-lib and the
 * e-invoice writer out of the API's bundle.
 */
export const handler = handle(buildApp(createDeps(), [pdfRenderer, eInvoiceWriter, pdfRoutes]));
