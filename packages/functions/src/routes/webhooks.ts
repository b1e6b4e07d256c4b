import { Hono } from "hono";
import { DomainError } from "@invoicing/core/errors";
import { handleCardProcessorEvent } from "@invoicing/core/payments/card-payments";
import { readRawBody } from "../body";
import type { AppEnv } from "../env";

/**
 * POST /webhooks/card-processor: Stripe's webhook. No API key — the Stripe-Signature header is the
 * authentication, checked over the exact bytes received before anything is read or written; a
 * missing or wrong one is 400 invalid_signature and changes nothing. A verified event answers 200
 * whatever it was (applied, duplicate, recorded for refund, ignored), so Stripe stops retrying it;
 * only a failure on our side (5xx) makes Stripe deliver it again.
 */
export const webhooks = new Hono<AppEnv>().post("/webhooks/card-processor", async (c) => {
  const deps = c.get("deps");
  const raw = await readRawBody(c);
  if (!deps.payments) throw new DomainError("invalid_signature", "no card processor is configured");
  const event = await deps.payments.verifyWebhook(raw, c.req.header("stripe-signature"), deps.clock());
  const outcome = await handleCardProcessorEvent(deps, event);
  return c.json({ received: true, outcome });
});
