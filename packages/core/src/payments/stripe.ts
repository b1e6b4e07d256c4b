import type Stripe from "stripe";
import { checkoutMetadata, verifiedMetadata } from "./session-metadata";
import { DomainError } from "../errors";
import {
  CardProcessorError,
  type CardProcessor,
  type CardProcessorEvent,
  type CheckoutSession,
  type CheckoutSessionInput,
  type Refund,
  type RefundInput,
} from "../capabilities/card-processor";
import { fromMinorUnits, toMinorUnits } from "./minor-units";

/**
 * The card processor on Stripe's official SDK: Checkout Sessions in `payment` mode and signed
 * webhooks (checkout.session.completed / async_payment_succeeded).
 */
interface StripeSettings {
  secretKey: string;
  /**
   * Without it no webhook can be verified, so every one is answered 503 (webhookNotConfigured below):
   * Stripe issues the secret only after the endpoint exists, and retries what it could not deliver,
   * so the payments of that window are applied once the secret is set.
   */
  webhookSecret?: string;
  /**
   * Another API origin, e.g. "http://127.0.0.1:12111": tests and local runs point the SDK at a
   * server that answers like Stripe's API (its host/port/protocol options). Default: api.stripe.com.
   */
  apiBase?: string;
}

/** Stripe retries a webhook for days; a signature older than this is refused (Stripe's default, 5 min). */
const SIGNATURE_TOLERANCE_SECONDS = 300;

/**
 * How long the SDK may take, so a request always ends with the app's own answer, never API
 * Gateway's bare 503 after the function was killed. Per call: (1 + retries) × timeout, plus the
 * SDK's backoff between tries (0.5 s before the first retry, stripe/esm/RequestSender.js). The pay
 * link asks for a session only when it has none to reuse (core/src/public/checkout.ts), and once
 * more when the invoice changed meanwhile (a payment, a new amount); so two calls: a worst case of
 * 2 × (2 × 3 s + 0.5 s) = 13 s, inside the Payments function's 25 s with room for the table
 * (test/payments/stripe-budget.test.ts checks the sum against infra). The SDK's defaults (80 s
 * timeout) or the former 8 s × 3 tries could not fit: one slow call outlived the function. Retries
 * reuse the idempotency key, so they never create a second session or refund. Stripe answers these
 * calls in well under a second; 3 s is a hang, not a slow answer.
 */
export const STRIPE_CALL = { timeoutMs: 3_000, maxNetworkRetries: 1, firstBackoffMs: 500, callsPerRequest: 2 } as const;
/** The subscriber's best-effort expiry after a void or a full payment: shorter still. */
const STRIPE_EXPIRE_CALL = { timeoutMs: 3_000, maxNetworkRetries: 1 } as const;

/** The longest a request's card processor calls can take, by the settings above. */
export const stripeWorstCaseMs = (call: { timeoutMs: number; maxNetworkRetries: number }, calls = 1): number =>
  calls * ((1 + call.maxNetworkRetries) * call.timeoutMs + call.maxNetworkRetries * STRIPE_CALL.firstBackoffMs);

/**
 * The SDK is loaded at first use, not at import: most requests never talk to Stripe, and the
 * API Lambda's cold start should not pay for evaluating it (npm run bench, "Lambda init").
 */
let sdk: Promise<typeof Stripe> | undefined;
const loadSdk = (): Promise<typeof Stripe> => (sdk ??= import("stripe").then((m) => m.default));

export function createStripeCardProcessor(settings: StripeSettings): CardProcessor {
  let client: Promise<Stripe> | undefined;
  const stripeClient = (): Promise<Stripe> =>
    (client ??= loadSdk().then(
      (StripeSdk) =>
        new StripeSdk(settings.secretKey, {
          ...apiBaseOptions(settings.apiBase),
          // Within the request's budget (STRIPE_CALL above).
          timeout: STRIPE_CALL.timeoutMs,
          maxNetworkRetries: STRIPE_CALL.maxNetworkRetries,
          telemetry: false,
        }),
    ));

  return {
    async createCheckoutSession(input: CheckoutSessionInput): Promise<CheckoutSession> {
      const minor = toMinorUnits(input.amountCents, input.currency);
      if (minor === null || minor <= 0n) {
        throw new CardProcessorError(
          "rejected",
          `an amount of ${input.amountCents} cents cannot be charged in ${input.currency}`,
        );
      }
      if (minor > BigInt(Number.MAX_SAFE_INTEGER))
        throw new CardProcessorError("rejected", "the amount is too large to charge");
      // Without a webhook secret no payment could ever be confirmed, and nothing could be signed.
      if (!settings.webhookSecret) throw new CardProcessorError("rejected", "no webhook secret is configured");
      const metadata = checkoutMetadata(settings.webhookSecret, {
        userId: input.userId,
        invoiceId: input.invoiceId,
        invoiceNumber: input.invoiceNumber,
        minor,
        currency: input.currency,
      });
      const stripe = await stripeClient();
      const session = await call(() =>
        stripe.checkout.sessions.create(
          {
            mode: "payment",
            line_items: [
              {
                quantity: 1,
                price_data: {
                  currency: input.currency.toLowerCase(),
                  // The one place an amount becomes a JS number: Stripe's API takes an integer.
                  unit_amount: Number(minor),
                  product_data: { name: `Invoice ${input.invoiceNumber}` },
                },
              },
            ],
            metadata,
            // The PaymentIntent carries them too, so a refund in Stripe's dashboard shows the invoice.
            payment_intent_data: { metadata },
            client_reference_id: `invoicing:${input.userId}:${input.invoiceId}`,
            ...(input.customerEmail ? { customer_email: input.customerEmail } : {}),
            success_url: input.successUrl,
            cancel_url: input.cancelUrl,
          },
          { idempotencyKey: input.idempotencyKey },
        ),
      );
      return toSession(session);
    },

    async expireSession(id: string): Promise<void> {
      const stripe = await stripeClient();
      // Best effort after a void or a full payment: a short wait, one retry, never the request's 25 s.
      await call(() =>
        stripe.checkout.sessions.expire(
          id,
          {},
          { timeout: STRIPE_EXPIRE_CALL.timeoutMs, maxNetworkRetries: STRIPE_EXPIRE_CALL.maxNetworkRetries },
        ),
      );
    },

    async createRefund(input: RefundInput): Promise<Refund> {
      const minor = toMinorUnits(input.amountCents, input.currency);
      if (minor === null || minor <= 0n) {
        const what = `an amount of ${input.amountCents} cents cannot be refunded in ${input.currency}`;
        throw new CardProcessorError("rejected", what);
      }
      const stripe = await stripeClient();
      const refund = await call(() =>
        stripe.refunds.create(
          {
            payment_intent: input.paymentIntentId,
            // The one place an amount becomes a JS number: Stripe's API takes an integer.
            amount: Number(minor),
            metadata: {
              invoicing_user_id: input.userId,
              invoicing_invoice_id: String(input.invoiceId),
              invoicing_payment_id: String(input.paymentId),
            },
          },
          { idempotencyKey: input.idempotencyKey },
        ),
      );
      return {
        id: refund.id,
        status: refund.status ?? "pending",
        amountCents: Number.isSafeInteger(refund.amount) ? fromMinorUnits(BigInt(refund.amount), input.currency) : null,
      };
    },

    async verifyWebhook(
      rawBody: string,
      signatureHeader: string | undefined,
      receivedAt: Date,
    ): Promise<CardProcessorEvent> {
      if (!settings.webhookSecret) throw webhookNotConfigured();
      if (!signatureHeader) throw new DomainError("invalid_signature", "the Stripe-Signature header is missing");
      const stripe = await stripeClient();
      let event: Stripe.Event;
      try {
        event = stripe.webhooks.constructEvent(
          rawBody,
          signatureHeader,
          settings.webhookSecret,
          SIGNATURE_TOLERANCE_SECONDS,
          undefined,
          receivedAt.getTime(),
        );
      } catch {
        // The SDK's message may quote the header; say only that it failed.
        throw new DomainError("invalid_signature", "the Stripe-Signature header does not match the request body");
      }
      return toEvent(event, receivedAt, settings.webhookSecret);
    },
  };
}

/** host/port/protocol options for a non-default API origin. */
function apiBaseOptions(apiBase: string | undefined): { host?: string; port?: number; protocol?: "http" | "https" } {
  if (!apiBase) return {};
  const url = new URL(apiBase);
  const protocol = url.protocol === "http:" ? "http" : "https";
  return { host: url.hostname, port: Number(url.port || (protocol === "http" ? 80 : 443)), protocol };
}

function toSession(session: Stripe.Checkout.Session): CheckoutSession {
  return {
    id: session.id,
    url: session.url,
    expiresAt: new Date(session.expires_at * 1000).toISOString(),
    status: session.status ?? "open",
  };
}

/** When the event happened; Stripe always sends `created`, else (or if unusable) when it arrived. */
function eventTime(event: Stripe.Event, receivedAt: Date): string {
  const at = new Date(Number(event.created) * 1000);
  return Number.isNaN(at.getTime()) ? receivedAt.toISOString() : at.toISOString();
}

/** Only a session whose money has arrived pays an invoice; everything else is acknowledged and ignored. */
function toEvent(event: Stripe.Event, receivedAt: Date, webhookSecret: string): CardProcessorEvent {
  const ignored: CardProcessorEvent = { kind: "ignored", eventId: event.id, eventType: event.type };
  const paid =
    (event.type === "checkout.session.completed" && event.data.object.payment_status === "paid") ||
    event.type === "checkout.session.async_payment_succeeded";
  if (!paid) return ignored;
  const session = event.data.object as Stripe.Checkout.Session;
  const currency = session.currency ? session.currency.toUpperCase() : null;
  const paymentIntent =
    typeof session.payment_intent === "string" ? session.payment_intent : session.payment_intent?.id;
  const total = session.amount_total;
  const amountCents = currency && Number.isSafeInteger(total) ? fromMinorUnits(BigInt(total!), currency) : null;
  // Only a session this service made, for exactly this amount and currency, names an invoice.
  const ours = verifiedMetadata(webhookSecret, session.metadata, session.amount_total, session.currency);
  return {
    kind: "checkout_paid",
    eventId: event.id,
    eventType: event.type,
    occurredAt: eventTime(event, receivedAt),
    sessionId: session.id,
    paymentReference: paymentIntent ?? session.id,
    paymentIntentId: paymentIntent ?? undefined,
    amountCents,
    currency,
    userId: ours?.userId,
    invoiceId: ours?.invoiceId,
  };
}

/**
 * Runs one SDK call, turning Stripe's errors into CardProcessorError. Messages stay generic: a
 * Stripe message can quote part of the API key.
 */
async function call<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    const { errors } = await loadSdk(); // loaded already: a request was made
    if (error instanceof errors.StripeError) {
      const transient =
        error instanceof errors.StripeConnectionError ||
        error instanceof errors.StripeRateLimitError ||
        error instanceof errors.StripeAPIError ||
        (error.statusCode ?? 0) >= 500;
      throw new CardProcessorError(
        transient ? "unavailable" : "rejected",
        `Stripe ${error.type}${error.code ? ` (${error.code})` : ""}${error.statusCode ? `, HTTP ${error.statusCode}` : ""}`,
      );
    }
    throw error;
  }
}

/**
 * The webhook before its secret is set: 503 (the processor retries for days, so the event is applied
 * once the secret is deployed), with a detail the operator recognises in the processor's dashboard.
 */
const webhookNotConfigured = (): DomainError =>
  new DomainError(
    "service_unavailable",
    "card payments are not configured yet: the card processor's webhook secret (StripeWebhookSecret) is not set " +
      "on this deployment; set it and deploy again (docs/deploying.md); this event will be retried",
  );
