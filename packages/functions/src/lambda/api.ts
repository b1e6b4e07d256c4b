import { handle } from "hono/aws-lambda";
import { apiRouteModules } from "../app/api-routes";
import { createBaseDeps } from "../capabilities/base";
import { buildApp } from "../app/build-app";

/**
 * The API Lambda (API Gateway HTTP API, payload v2, $default route). Built once per container, at init.
 * No capability: no route here calls the card processor (send stores our own pay link; the stream
 * subscriber expires the checkout session of a voided or paid invoice), so the Stripe SDK is not in
 * this bundle (npm run bench lists every function's bundle and init).
 */
export const handler = handle(buildApp(createBaseDeps(process.env), apiRouteModules));
