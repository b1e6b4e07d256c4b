import { handle } from "hono/aws-lambda";
import { apiRouteModules } from "../app/api-routes";
import { buildApp } from "../app/build-app";
import { peppolProvider } from "../capabilities/peppol-provider";
import { createDeps } from "../capabilities/create-deps";
import { withInvocationDeadline } from "./deadline";

/**
 * The API Lambda (API Gateway HTTP API, payload v2, $default route). Built once per container, at
 * init, with every route module: loading them at the first routed request instead (a build-time
 * route table and code splitting) saved 2 % of a cold start's init and first routed response, and
 * was removed for it (issue 41; docs/benchmarks.md, `npm run bench -- coldstart`).
 * No capability: no route here calls the card processor (send stores our own pay link; the stream
 * subscriber expires the checkout session of a voided or paid invoice), so the Stripe SDK is not in
 * this bundle (npm run bench lists every function's bundle and init).
 */
export const handler = withInvocationDeadline(
  handle(buildApp(createDeps(process.env, [peppolProvider]), apiRouteModules)),
);
