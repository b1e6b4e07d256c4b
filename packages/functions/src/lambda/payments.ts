import { handle } from "hono/aws-lambda";
import { createBaseDeps } from "../capabilities/base";
import { cardProcessor } from "../capabilities/card-processor";
import { paymentRouteModules } from "../app/payments-routes";
import { buildApp } from "../app/build-app";

/**
 * The payments Lambda: API Gateway sends it the pay link and the card processor's webhook
 * (infra/api.ts), with the same middleware as the API (app/build-app.ts). The one HTTP function with the Stripe SDK.
 */
export const handler = handle(buildApp(createBaseDeps(process.env, [cardProcessor]), paymentRouteModules));
