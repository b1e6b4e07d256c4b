import { createStripeCardProcessor } from "@invoicing/core/payments/stripe";
import type { Capability } from "./create-deps";

/**
 * Card payments (docs/payments.md): on when a Stripe secret key is set — the linked secrets
 * StripeSecretKey / StripeWebhookSecret deployed, STRIPE_SECRET_KEY / STRIPE_WEBHOOK_SECRET locally.
 * STRIPE_API_BASE points the SDK at another server (a local stand-in for Stripe's API).
 * Carries the Stripe SDK: only the functions that talk to Stripe import this module. The SDK is
 * imported at the first call (core/src/payments/stripe.ts), so it is evaluated only then; a function
 * that calls Stripe now and then (the stream subscriber) also keeps it out of its bundle, installed
 * beside it (`installedBeside` in infra/runtime.ts).
 */
export const cardProcessor: Capability = (config, env) =>
  config.stripeSecretKey
    ? {
        payments: createStripeCardProcessor({
          secretKey: config.stripeSecretKey,
          webhookSecret: config.stripeWebhookSecret,
          apiBase: env.STRIPE_API_BASE || undefined,
        }),
      }
    : {};
