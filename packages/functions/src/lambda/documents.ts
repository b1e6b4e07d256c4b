import { handle } from "hono/aws-lambda";
import { withInvocationDeadline } from "./deadline";
import { createDeps } from "../capabilities/create-deps";
import { documentRouteModules } from "../app/documents-routes";
import { eInvoiceWriter } from "../http/einvoice-writer";
import { pdfRenderer } from "../http/pdf-renderer";
import { openApiSource } from "../app/openapi-source";
import { buildApp } from "../app/build-app";

/**
 * The documents Lambda: API Gateway sends it every documents path (infra/api.ts), with the same
 * middleware (app/build-app.ts: auth, errors, 405) as the API. It mounts the PDF renderer (pdf-lib,
 * loaded at the first PDF) and the e-invoice writer (loaded at the first e-invoice); its own function
 * keeps both out of the API's bundle.
 * It needs no capability: it reads the table and renders.
 */
export const handler = withInvocationDeadline(
  handle(buildApp(createDeps(process.env), [pdfRenderer, eInvoiceWriter, openApiSource, ...documentRouteModules])),
);
