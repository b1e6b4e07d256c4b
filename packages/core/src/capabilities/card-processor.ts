/**
 * The card processor as core sees it: hosted checkout sessions and signed webhooks. Stripe is the
 * one implementation (stripe.ts); without it `Deps.payments` is unset and invoices carry no card
 * payment link. Core speaks exact cents (bigint) and ISO times here; the adapter converts to and
 * from the processor's own units at its edge.
 */
export interface CardProcessor {
  /** Creates a hosted checkout page for one payment. Retrying with the same idempotency key never makes two. */
  createCheckoutSession(input: CheckoutSessionInput): Promise<CheckoutSession>;
  /** Makes an open session unpayable (Stripe's checkout.sessions.expire). Throws for a session not open. */
  expireSession(id: string): Promise<void>;
  /**
   * Refunds part or all of a payment. Retrying with the same idempotency key returns the first
   * refund instead of making a second (Stripe keeps keys at least 24 hours).
   */
  createRefund(input: RefundInput): Promise<Refund>;
  /**
   * Checks the webhook's signature over the exact request body and returns the event it carries.
   * Throws DomainError("invalid_signature") when the signature is missing, wrong or too old
   * (relative to `receivedAt`), and DomainError("service_unavailable") while no webhook secret is
   * configured (the processor retries; docs/deploying.md).
   */
  verifyWebhook(rawBody: string, signatureHeader: string | undefined, receivedAt: Date): Promise<CardProcessorEvent>;
}

export interface CheckoutSessionInput {
  userId: string;
  invoiceId: number;
  invoiceNumber: string;
  /** What is to be paid, in cents (API.md: every amount has two decimals, whatever the currency). */
  amountCents: bigint;
  /** ISO 4217, uppercase as stored. */
  currency: string;
  customerEmail?: string | null;
  successUrl: string;
  cancelUrl: string;
  idempotencyKey: string;
}

export interface RefundInput {
  /** The processor's id of the payment (a PaymentIntent). */
  paymentIntentId: string;
  amountCents: bigint;
  currency: string;
  idempotencyKey: string;
  /** Ties the refund to our records in the processor's dashboard. */
  userId: string;
  invoiceId: number;
  paymentId: number;
}

export interface Refund {
  id: string;
  /** succeeded or pending: the money goes back; failed/canceled: it does not. */
  status: string;
  amountCents: bigint | null;
}

type CheckoutSessionStatus = "open" | "complete" | "expired";

export interface CheckoutSession {
  id: string;
  url: string | null;
  /** ISO 8601 UTC. */
  expiresAt: string;
  status: CheckoutSessionStatus | (string & {});
}

/** A verified webhook event, reduced to what the invoice side acts on. */
export type CardProcessorEvent = CheckoutPaidEvent | IgnoredEvent;

/** A checkout session's payment has succeeded (at once for cards, later for delayed methods). */
export interface CheckoutPaidEvent {
  kind: "checkout_paid";
  eventId: string;
  eventType: string;
  /** When the processor created the event: the payment's time. ISO 8601 UTC. */
  occurredAt: string;
  sessionId: string;
  /** The processor's id for the money movement (the payment intent), else the session id. */
  paymentReference: string;
  /** The PaymentIntent, what a refund names; absent when the processor gave none. */
  paymentIntentId?: string;
  /** The session's amount in cents, or null when it cannot be expressed in cents exactly. */
  amountCents: bigint | null;
  /** ISO 4217, uppercase; null if the processor did not say. */
  currency: string | null;
  /**
   * From the session's metadata, which we set and signed at creation; absent unless the signature
   * verifies (a session made elsewhere on the same account, or metadata copied onto another amount).
   */
  userId?: string;
  invoiceId?: number;
}

interface IgnoredEvent {
  kind: "ignored";
  eventId: string;
  eventType: string;
}

/**
 * A call to the processor that failed. `unavailable`: network, rate limit or the processor's own
 * fault — retrying later may work. `rejected`: the processor refused the request (an amount it
 * cannot charge, a bad key) — retrying the same will not.
 */
export class CardProcessorError extends Error {
  constructor(
    readonly kind: "unavailable" | "rejected",
    message: string,
  ) {
    super(message);
    this.name = "CardProcessorError";
  }
}
