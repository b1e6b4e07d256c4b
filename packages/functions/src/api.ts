import { handle } from "hono/aws-lambda";
import { apiRouteModules } from "./api-routes";
import { createBaseDeps } from "./capabilities/base";
import { cardProcessor } from "./capabilities/card-processor";
import { buildApp } from "./spine";

/**
 * The API Lambda (API Gateway HTTP API, payload v2, $default route). Built once per container, at init.
 * The card processor is still here because `send` creates a payment link within the request; once
 * send no longer calls it (the pay link makes the session on click), the capability goes, and the
 * Stripe SDK with it from this bundle (npm run bench, "Api projection").
 */
export const handler = handle(buildApp(createBaseDeps(process.env, [cardProcessor]), apiRouteModules));
