import * as v from "valibot";
import { idOut, timestampOut } from "../resource";

/** The webhook endpoint and delivery response shapes (see ../resource.ts). */

const endpointFields = {
  id: idOut,
  url: v.string(),
  events: v.pipe(v.array(v.string()), v.description('The event types it receives, or `["*"]` for all.')),
  description: v.nullable(v.string()),
  enabled: v.pipe(
    v.boolean(),
    v.description(
      "False when the user disabled it (PATCH), or when every delivery to it has failed for 5 days: the " +
        "service then disables it with a `webhook_endpoint.disabled` event. A disabled endpoint receives " +
        "nothing until it is enabled again.",
    ),
  ),
  createdAt: timestampOut,
};

export const WebhookEndpoint = v.strictObject(endpointFields);
export type WebhookEndpoint = v.InferOutput<typeof WebhookEndpoint>;

/**
 * The answer to a create or a rotation: the endpoint with its signing secret, shown only then. An
 * idempotent replay of either answers `secret: null`: idempotency records never keep the secret.
 */
export const CreatedWebhookEndpoint = v.strictObject({
  ...endpointFields,
  secret: v.pipe(
    v.nullable(v.pipe(v.string(), v.regex(/^whsec_[A-Za-z0-9+/]{43}=$/))),
    v.description(
      "The signing secret: shown only in this response (null in an idempotent replay, which never keeps it)",
    ),
  ),
});

/** A delivery attempt as listed; a claimed attempt in flight shows as pending. */
export const Delivery = v.strictObject({
  eventId: v.string(),
  type: v.string(),
  attempt: v.pipe(v.number(), v.integer(), v.minValue(1)),
  status: v.picklist(["succeeded", "failed", "pending"]),
  responseStatus: v.nullable(v.pipe(v.number(), v.integer())),
  error: v.nullable(v.string()),
  attemptedAt: v.nullable(timestampOut),
  nextAttemptAt: v.nullable(timestampOut),
});
export type Delivery = v.InferOutput<typeof Delivery>;
