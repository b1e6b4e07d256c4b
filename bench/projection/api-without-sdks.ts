import { handle } from "hono/aws-lambda";
import { apiRouteModules } from "@invoicing/functions/api-routes";
import { createBaseDeps } from "@invoicing/functions/capabilities/base";
import { buildApp } from "@invoicing/functions/spine";

/**
 * Bench only (never deployed): the API entry as it becomes once `send` no longer calls the card
 * processor and the stream subscriber delivers email — the same routes with no capability, so
 * neither the Stripe nor the SES SDK. `npm run bench` measures it beside the real API bundle so the
 * cost of those two SDKs in the API's cold start is a measured figure, not a guess.
 */
export const handler = handle(buildApp(createBaseDeps(process.env), apiRouteModules));
