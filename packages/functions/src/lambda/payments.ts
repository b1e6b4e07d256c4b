import { handle } from "hono/aws-lambda";
import { withInvocationDeadline } from "./deadline";
import { createDeps } from "../capabilities/create-deps";
import { cardProcessor } from "../capabilities/card-processor";
import { paymentRouteModules } from "../app/payments-routes";
import { buildApp } from "../app/build-app";

/**
 * The payments Lambda: API Gateway sends it the pay link and the card processor's webhook
 * (infra/api.ts), with the same middleware as the API (app/build-app.ts). The one HTTP function with
 * the Stripe SDK, inlined in its bundle (unlike the subscriber's, installed beside it): nearly every
 * request here calls Stripe, and loading the SDK's files at the first one costs more than parsing it
 * at init (docs/benchmarks.md).
 */
export const handler = withInvocationDeadline(
  handle(buildApp(createDeps(process.env, [cardProcessor]), paymentRouteModules)),
);
