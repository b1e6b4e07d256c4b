import type { Deps } from "@invoicing/core/context";
import { apiRouteModules } from "./api-routes";
import { pdfRoutes } from "./routes/pdf";
import { buildApp } from "./spine";

/**
 * Every route module of the service, each mounted at "/": the API function's and the PDF
 * function's. One list for the local server, the tests and the typed client (client.ts derives
 * AppType from it), so a module added here is routed and typed at once.
 */
export const routeModules = [...apiRouteModules, pdfRoutes] as const;

/** The whole service as one app: what `npm start` serves and the tests call. */
export function createApp(deps: Deps) {
  return buildApp(deps, routeModules);
}
