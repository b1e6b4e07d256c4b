import { handle } from "hono/aws-lambda";
import { apiRouteLoaders } from "../app/api-route-loaders";
import { buildApp } from "../app/build-app";
import { lazyRoutes, loadRouteModules, routeTableOf, type RouteEntry } from "../app/lazy-routes";
import { createBaseDeps } from "../capabilities/base";
import { errorToResponse } from "../http/problems";

/**
 * The route table of the API's modules, derived from them when infra builds this function
 * (infra/api.ts: esbuild `define`, app/route-paths.ts apiRouteTable). Undefined when this file runs
 * unbundled; the table is then derived here, from the modules loaded at once.
 */
declare const API_ROUTE_TABLE: RouteEntry[] | undefined;

const table =
  typeof API_ROUTE_TABLE === "undefined" ? routeTableOf(await loadRouteModules(apiRouteLoaders)) : API_ROUTE_TABLE;

/**
 * The API Lambda (API Gateway HTTP API, payload v2, $default route). Built once per container, at
 * init; each route module is loaded at the first request that needs it (app/lazy-routes.ts), so a
 * cold start carries the router, the middleware and the SDK client, not the ~70 operations.
 * No capability: no route here calls the card processor (send stores our own pay link; the stream
 * subscriber expires the checkout session of a voided or paid invoice), so the Stripe SDK is not in
 * this bundle (npm run bench lists every function's bundle and init).
 */
export const handler = handle(
  buildApp(createBaseDeps(process.env), [lazyRoutes(table, apiRouteLoaders, (error, c) => errorToResponse(c, error))]),
);
