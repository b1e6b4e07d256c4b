/**
 * The card processor's (Stripe's) keys, set per stage with `npx sst secret set <Name> <value>`.
 * The empty placeholder means "not configured", so a stage deploys before anyone has Stripe keys:
 * - no StripeSecretKey: no card processor (no payment links; the webhook answers 400);
 * - StripeSecretKey but no StripeWebhookSecret yet: Stripe issues the webhook secret only once the
 *   endpoint URL exists, i.e. after the first deploy. Until it is set (and deployed again) the webhook
 *   answers 503 service_unavailable, which Stripe retries for days: card payments made meanwhile wait
 *   at Stripe and are applied once the secret is deployed (docs/deploying.md).
 */
export const stripeSecretKey = new sst.Secret("StripeSecretKey", "");
export const stripeWebhookSecret = new sst.Secret("StripeWebhookSecret", "");

/**
 * Whether card payments are on, without the key: what the API and the recurring job need (`send`
 * stores a pay link when there is a processor; the session is made later, by the Payments function).
 * A function that only has to know a key is set never holds the live key.
 */
export const cardPayments = new sst.Linkable("CardPayments", {
  properties: { enabled: stripeSecretKey.value.apply((key) => key !== "") },
});

/**
 * The Peppol access point provider's (Storecove's) API key (docs/peppol.md), set per stage with
 * `npx sst secret set StorecoveApiKey <value>`; the empty placeholder means "no provider": Peppol
 * registration and sends answer 422 peppol_not_configured, email works as before. Linked only to the
 * functions that call the provider: the API (registration, the send's receiver lookup), the peppol
 * queue's worker (the first hand-over) and the PeppolJob (retries and polls of the outcome).
 */
export const storecoveApiKey = new sst.Secret("StorecoveApiKey", "");
