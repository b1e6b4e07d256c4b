import type { Deps } from "@invoicing/core/deps";
import { eInvoiceWriter } from "../http/einvoice-writer";
import { pdfRenderer } from "../http/pdf-renderer";
import { openApiSource } from "./openapi-source";
import { routeModules } from "./route-modules";
import { buildApp } from "./build-app";

export { routeModules };

/** The whole service as one app: what `npm start` serves and the tests call. */
export function createApp(deps: Deps) {
  return buildApp(deps, [pdfRenderer, eInvoiceWriter, openApiSource, ...routeModules]);
}
