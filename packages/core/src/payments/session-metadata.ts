import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * The metadata on our checkout sessions (and their PaymentIntents), and the proof that a session
 * is ours.
 *
 * One Stripe account may serve other integrations too, and anyone holding its API key can create a
 * session with any metadata. So the names are namespaced (`invoicing_…`, no clash with another
 * integration's `userId`), and the metadata carries an HMAC-SHA256 over
 * (user, invoice, amount in minor units, currency), keyed by a key derived from the webhook
 * secret. The webhook accepts a paid session as an invoice's payment only when that signature
 * verifies for the session's own amount and currency: a foreign session, or our metadata copied
 * onto a session for another amount, is acknowledged and ignored.
 *
 * Why an HMAC rather than "the session id stored on the invoice": the invoice stores only its
 * latest session. An older one (replaced when the amount due changed, whose expiry may have
 * failed) can still be paid, and that money must still be recorded — as a payment or a refund to
 * make — not ignored. The HMAC also decides without reading anything.
 *
 * The key is derived (HMAC of a fixed label under the webhook secret), not the secret itself: the
 * webhook secret never signs anything else, and rotating it (a new endpoint secret) retires the
 * signatures of sessions made before — which have expired by then (24 hours at most).
 */
const METADATA_NAMES = {
  userId: "invoicing_user_id",
  invoiceId: "invoicing_invoice_id",
  invoiceNumber: "invoicing_invoice_number",
  signature: "invoicing_signature",
} as const;

interface Signed {
  userId: string;
  invoiceId: number;
  /** The session's amount in the processor's minor units, as charged. */
  minor: bigint;
  currency: string;
}

const deriveKey = (webhookSecret: string): Buffer =>
  createHmac("sha256", webhookSecret).update("invoicing/checkout-session-metadata/v1").digest();

const signature = (webhookSecret: string, s: Signed): string =>
  createHmac("sha256", deriveKey(webhookSecret))
    .update(["v1", s.userId, String(s.invoiceId), s.minor.toString(), s.currency.toLowerCase()].join("\n"))
    .digest("base64url");

export function checkoutMetadata(webhookSecret: string, s: Signed & { invoiceNumber: string }): Record<string, string> {
  return {
    [METADATA_NAMES.userId]: s.userId,
    [METADATA_NAMES.invoiceId]: String(s.invoiceId),
    [METADATA_NAMES.invoiceNumber]: s.invoiceNumber,
    [METADATA_NAMES.signature]: signature(webhookSecret, s),
  };
}

/** The user and invoice a paid session names, when its metadata is ours and signed for this amount; else undefined. */
export function verifiedMetadata(
  webhookSecret: string,
  metadata: Record<string, string> | null | undefined,
  amountMinor: number | null | undefined,
  currency: string | null | undefined,
): { userId: string; invoiceId: number } | undefined {
  const userId = metadata?.[METADATA_NAMES.userId];
  const invoiceId = Number(metadata?.[METADATA_NAMES.invoiceId]);
  const given = metadata?.[METADATA_NAMES.signature];
  if (!userId || !Number.isSafeInteger(invoiceId) || invoiceId <= 0 || !given) return undefined;
  if (!currency || !Number.isSafeInteger(amountMinor)) return undefined;
  const expected = Buffer.from(signature(webhookSecret, { userId, invoiceId, minor: BigInt(amountMinor!), currency }));
  const actual = Buffer.from(given);
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return undefined;
  return { userId, invoiceId };
}
