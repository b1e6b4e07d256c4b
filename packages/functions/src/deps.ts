import { join, resolve } from "node:path";
import { loadConfig, type CoreConfig } from "@invoicing/core/config";
import type { Deps } from "@invoicing/core/context";
import { createDb } from "@invoicing/core/db/client";
import { FileTransport } from "@invoicing/core/email/file-transport";
import { emailSender } from "@invoicing/core/email/sender";
import { SesTransport, createSesClient } from "@invoicing/core/email/ses-transport";
import type { EmailTransport } from "@invoicing/core/email/transport";
import { createStripeCardProcessor } from "@invoicing/core/payments/stripe";

/** Production dependencies, built once per Lambda container (or local process). */
export function createDeps(env: NodeJS.ProcessEnv = process.env): Deps {
  const config = loadConfig(env);
  return {
    db: createDb(config),
    clock: () => new Date(),
    // Locally, with no base URL configured, email links point at the local server.
    publicBaseUrl: config.publicBaseUrl ?? (config.emailSender ? undefined : `http://localhost:${env.PORT || 3000}`),
    outbox: emailTransport(config, env),
    trustProxy: env.TRUST_PROXY === "1" || env.TRUST_PROXY === "true",
    emailDailyQuota: emailDailyQuota(env.EMAIL_DAILY_QUOTA),
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

/**
 * The email outbox's backend (API.md section 9): Amazon SES when a sender is configured (the linked
 * `Email` deployed), else `.eml` files under <DATA_DIR>/outbox/ (DATA_DIR default
 * .data, as in packages/local/src/paths.ts).
 */
function emailTransport(config: CoreConfig, env: NodeJS.ProcessEnv): EmailTransport {
  const sender = emailSender(config.emailSender, env);
  if (config.emailSender) {
    return new SesTransport(createSesClient(config.region), { ...sender, configurationSet: config.emailConfigSet });
  }
  return new FileTransport(join(resolve(env.DATA_DIR || ".data"), "outbox"), sender);
}

/** EMAIL_DAILY_QUOTA: a positive integer; unset means the default (email/quota.ts). */
function emailDailyQuota(value: string | undefined): number | undefined {
  if (value === undefined || value === "") return undefined;
  const quota = Number(value);
  if (!Number.isSafeInteger(quota) || quota < 1) throw new Error("EMAIL_DAILY_QUOTA must be a positive integer");
  return quota;
}
