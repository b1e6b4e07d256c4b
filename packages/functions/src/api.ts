import { handle } from "hono/aws-lambda";
import { apiRouteModules } from "./api-routes";
import { createBaseDeps } from "./capabilities/base";
import { cardProcessor } from "./capabilities/card-processor";
import { emailOutbox } from "./capabilities/email-outbox";
import { buildApp } from "./spine";

/**
 * The API Lambda (API Gateway HTTP API, payload v2, $default route). Built once per container, at init.
 * Its two capabilities are still here because `send` creates a payment link and delivers its email
 * within the request; once send no longer calls the card processor and the stream subscriber
 * delivers email, both go, and with them the Stripe and SES SDKs from this bundle (npm run bench).
 */
export const handler = handle(buildApp(createBaseDeps(process.env, [emailOutbox, cardProcessor]), apiRouteModules));
