import { payments } from "./routes/payments";
import { webhooks } from "./routes/webhooks";

/**
 * What the payments Lambda (payments-api.ts) serves: the two paths that talk to the card processor,
 * the pay link (creates or reuses the checkout session) and the processor's webhook. The only
 * function that carries the Stripe SDK and the webhook secret.
 */
export const paymentRouteModules = [payments, webhooks] as const;
