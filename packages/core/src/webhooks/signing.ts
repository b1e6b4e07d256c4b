import { createHmac } from "node:crypto";

/**
 * Standard Webhooks signing (standardwebhooks.com): the signature is HMAC-SHA256 over
 * `<webhook-id>.<webhook-timestamp>.<body>`, keyed by the secret's bytes (the base64 after
 * `whsec_`), sent as `v1,<base64>`. Receivers verify it with any Standard Webhooks library.
 * Several secrets (a rotation's overlap) give several signatures, space-separated, as the
 * specification allows: a receiver holding any one of the secrets verifies the delivery.
 */
export function signatureHeaders(
  secrets: string | readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  const signatures = (typeof secrets === "string" ? [secrets] : secrets).map((secret) => {
    const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
    return `v1,${createHmac("sha256", key).update(`${id}.${timestampSeconds}.${body}`).digest("base64")}`;
  });
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": signatures.join(" "),
  };
}
