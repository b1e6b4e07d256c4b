import { createHmac } from "node:crypto";

/**
 * Standard Webhooks signing (standardwebhooks.com): the signature is HMAC-SHA256 over
 * `<webhook-id>.<webhook-timestamp>.<body>`, keyed by the secret's bytes (the base64 after
 * `whsec_`), sent as `v1,<base64>`. Receivers verify it with any Standard Webhooks library.
 */
export function signatureHeaders(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const signature = createHmac("sha256", key).update(`${id}.${timestampSeconds}.${body}`).digest("base64");
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": `v1,${signature}`,
  };
}
