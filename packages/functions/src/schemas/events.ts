import * as v from "valibot";
import { EVENT_TYPES, RESOURCE_TYPES } from "@invoicing/core/events/types";
import { MAX_ENDPOINTS } from "@invoicing/core/webhooks/endpoints";
import { pathId } from "./common";
import { timestampOut } from "./resources";

/** Requests and responses of the events and webhook endpoints routes (docs/events.md). */

export const eventListFilters = {
  type: v.optional(v.picklist(EVENT_TYPES, "must be an event type (docs/events.md)")),
  resourceType: v.optional(v.picklist(RESOURCE_TYPES as [string, ...string[]], `must be one of ${RESOURCE_TYPES.join(", ")}`)),
  resourceId: v.optional(pathId),
};

const url = v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(2048), v.url("must be an absolute URL"));
const eventTypes = v.pipe(
  v.array(v.picklist([...EVENT_TYPES, "*"], 'must be an event type (docs/events.md) or "*"')),
  v.minLength(1, "must name at least one event type, or be [\"*\"]"),
  v.maxLength(EVENT_TYPES.length + 1),
);
const description = v.pipe(v.string(), v.maxLength(500));

export const createEndpointBody = v.strictObject({
  url,
  events: eventTypes,
  description: v.optional(v.nullable(description)),
});

export const updateEndpointBody = v.strictObject({
  url: v.optional(url),
  events: v.optional(eventTypes),
  description: v.optional(v.nullable(description)),
  enabled: v.optional(v.boolean()),
});

const idOut = v.pipe(v.number(), v.integer(), v.minValue(1));

export const EventResource = v.strictObject({
  id: v.pipe(v.string(), v.description("Derived from the change; the webhook-id of its deliveries")),
  type: v.picklist(EVENT_TYPES),
  createdAt: timestampOut,
  resourceType: v.picklist(RESOURCE_TYPES as [string, ...string[]]),
  resourceId: idOut,
  data: v.pipe(v.record(v.string(), v.unknown()), v.description("The resource after the change (before it, for *.deleted)")),
});

const endpointFields = {
  id: idOut,
  url: v.string(),
  events: v.array(v.string()),
  description: v.nullable(v.string()),
  enabled: v.boolean(),
  createdAt: timestampOut,
};

export const WebhookEndpointResource = v.strictObject(endpointFields);
export const CreatedWebhookEndpoint = v.strictObject({
  ...endpointFields,
  secret: v.pipe(v.string(), v.regex(/^whsec_[A-Za-z0-9+/]{43}=$/), v.description("The signing secret: shown only in this response")),
});

export const DeliveryResource = v.strictObject({
  eventId: v.string(),
  type: v.string(),
  attempt: v.pipe(v.number(), v.integer(), v.minValue(1)),
  status: v.picklist(["succeeded", "failed", "pending"]),
  responseStatus: v.nullable(v.pipe(v.number(), v.integer())),
  error: v.nullable(v.string()),
  attemptedAt: v.nullable(timestampOut),
  nextAttemptAt: v.nullable(timestampOut),
});

export { MAX_ENDPOINTS };
