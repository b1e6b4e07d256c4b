import type { Deps } from "@invoicing/core/context";
import { apiRouteModules } from "./api-routes";
import { documentRouteModules } from "./documents-routes";
import { paymentRouteModules } from "./payments-routes";
import { buildApp } from "./spine";

/**
 * Every route module of the service, each mounted at "/": the API function's, the documents
 * function's and the payments function's. One list for the local server, the tests and the typed
 * client (client.ts derives AppType from it), so a module added here is routed and typed at once.
 */
export const routeModules = [...apiRouteModules, ...documentRouteModules, ...paymentRouteModules] as const;

/** The whole service as one app: what `npm start` serves and the tests call. */
export function createApp(deps: Deps) {
  return buildApp(deps, routeModules);
}
