import { loadConfig } from "@invoicing/core/config";
import type { Deps } from "@invoicing/core/context";
import { createDb } from "@invoicing/core/db/client";
import { createStripeCardProcessor } from "@invoicing/core/payments/stripe";

/**
 * Production dependencies, built once per Lambda container (or local process). What requests need
 * only: email delivery and the event bus belong to the stream subscriber and the jobs
 * (delivery-deps.ts), so the API function's bundle carries neither SES nor EventBridge.
 */
export function createDeps(env: NodeJS.ProcessEnv = process.env): Deps {
  const config = loadConfig(env);
  return {
    db: createDb(config),
    clock: () => new Date(),
    // Locally, with no base URL configured, email links point at the local server.
    publicBaseUrl: config.publicBaseUrl ?? (config.emailSender ? undefined : `http://localhost:${env.PORT || 3000}`),
    webhookPolicy: { allowPrivate: config.webhooksAllowPrivate },
    // Card payments (docs/payments.md): on when a Stripe secret key is set — the linked secrets
    // StripeSecretKey / StripeWebhookSecret deployed, STRIPE_SECRET_KEY / STRIPE_WEBHOOK_SECRET
    // locally. STRIPE_API_BASE points the SDK at another server (a local stand-in for Stripe's API).
    payments: config.stripeSecretKey
      ? createStripeCardProcessor({
          secretKey: config.stripeSecretKey,
          webhookSecret: config.stripeWebhookSecret,
          apiBase: env.STRIPE_API_BASE || undefined,
        })
      : undefined,
  };
}
