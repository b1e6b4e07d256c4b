import { operationsOf, type Operation } from "../openapi/operations";
import { apiRouteModules } from "./api-routes";
import { documentRouteModules } from "./documents-routes";
import { paymentRouteModules } from "./payments-routes";

/**
 * Every route module of the service, each mounted at "/": the API function's, the documents
 * function's and the payments function's. One list for the local server and the tests (create-app.ts),
 * the typed client (api-client.ts derives AppType from it) and GET /openapi.json (allOperations
 * below; app/openapi-source.ts), so a module added here is routed, typed and documented at once. Route modules are
 * light to load: what is heavy (pdf-lib) reaches them through the app (http/pdf-renderer.ts).
 */
export const routeModules = [...apiRouteModules, ...documentRouteModules, ...paymentRouteModules] as const;

/** Every operation of the service, in the order its routes are registered (openapi/operations.ts). */
export const allOperations = (): Operation[] => operationsOf(routeModules.flatMap((module) => module.routes));
