import { cardProcessor } from "../routes/card-processor";
import { webhooks } from "../routes/webhooks";

/**
 * What the Payments Lambda (lambda/payments.ts) serves: every route that talks to the card processor
 * — the pay link, the refund of a card payment — and the processor's webhook. Only this function
 * carries the webhook secret.
 */
export const paymentRouteModules = [cardProcessor, webhooks] as const;
