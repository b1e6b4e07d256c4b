/**
 * The card processor's (Stripe's) keys, set per stage with `npx sst secret set <Name> <value>`.
 * The empty placeholder means "not configured": the app then runs without a card processor (no
 * payment links; the webhook rejects every call), so a stage deploys before anyone has Stripe keys.
 */
export const stripeSecretKey = new sst.Secret("StripeSecretKey", "");
export const stripeWebhookSecret = new sst.Secret("StripeWebhookSecret", "");
