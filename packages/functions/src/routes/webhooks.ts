import { Hono } from "hono";
import * as v from "valibot";
import { DomainError } from "@invoicing/core/errors";
import { handleCardProcessorEvent } from "@invoicing/core/payments/card-payments";
import type { AppEnv } from "../http/app-env";
import { describe } from "../http/describe";
import { WebhookReceipt } from "../schemas/resources";
import { rawBody } from "../http/validators";

/**
 * POST /webhooks/card-processor: Stripe's webhook. No API key — the Stripe-Signature header is the
 * authentication, checked over the exact bytes received before anything is read or written; a
 * missing or wrong one is 400 invalid_signature and changes nothing. A verified event answers 200
 * whatever it was (applied, duplicate, recorded for refund, ignored), so Stripe stops retrying it;
 * only a failure on our side (5xx) makes Stripe deliver it again.
 */
export const webhooks = new Hono<AppEnv>().post(
  "/webhooks/card-processor",
  describe({
    operationId: "cardProcessorWebhook",
    tag: "Card processor",
    summary: "The card processor's webhook",
    description:
      "Called by the card processor, not by API users. Its signature over the exact body is the authentication: missing or invalid is a 400 `invalid_signature` and nothing changes. A verified event is answered 200 whatever it was, so the processor stops retrying it. While the card processor's key is set but its webhook secret is not yet (the first deploy), every call is a 503 `service_unavailable`, which the processor retries until the secret is deployed.",
    headers: [{ name: "Stripe-Signature", required: true, description: "The card processor's signature of the body." }],
    success: { status: 200, description: "The event was verified and handled.", schema: WebhookReceipt },
    public: true,
    problems: ["invalid_signature"],
  }),
  rawBody(v.looseObject({})),
  async (c) => {
    const deps = c.get("deps");
    const raw = c.get("rawBody") ?? "";
    if (!deps.payments) throw new DomainError("invalid_signature", "no card processor is configured");
    const event = await deps.payments.verifyWebhook(raw, c.req.header("stripe-signature"), deps.clock());
    const outcome = await handleCardProcessorEvent(deps, event);
    return c.json({ received: true, outcome });
  },
);
