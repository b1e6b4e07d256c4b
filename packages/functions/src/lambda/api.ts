import { handle } from "hono/aws-lambda";
import { buildApp } from "../app/build-app";
import { lazyRoutes, routeTableOf, type RouteEntry } from "../app/lazy-routes";
import { peppolProvider } from "../capabilities/peppol";
import { createBaseDeps } from "../capabilities/base";
import { errorToResponse } from "../http/problems";

/**
 * The route table of the API's modules (app/api-routes.ts), derived from them when infra builds this
 * function (infra/api.ts: esbuild `define`, app/route-paths.ts apiRouteTable). Undefined when this
 * file runs unbundled; the table is then derived here, from the modules loaded at once.
 */
declare const API_ROUTE_TABLE: RouteEntry[] | undefined;

/** The API's route modules: a chunk of their own, loaded at the first request that is routed. */
const loadModules = () => import("../app/api-routes").then((m) => m.apiRouteModules);

const table = typeof API_ROUTE_TABLE === "undefined" ? routeTableOf(await loadModules()) : API_ROUTE_TABLE;

/**
 * The API Lambda (API Gateway HTTP API, payload v2, $default route). Built once per container, at
 * init, from the route table; the route modules load at the first request that reaches a route
 * (app/lazy-routes.ts), so a cold start that answers a 401, 404 or 405 never loads them, and init
 * carries the router, the middleware and the SDK client only.
 * No capability: no route here calls the card processor (send stores our own pay link; the stream
 * subscriber expires the checkout session of a voided or paid invoice), so the Stripe SDK is not in
 * this bundle (npm run bench lists every function's bundle and init).
 */
export const handler = handle(
  buildApp(createBaseDeps(process.env, [peppolProvider]), [
    lazyRoutes(table, loadModules, (error, c) => errorToResponse(c, error)),
  ]),
);
