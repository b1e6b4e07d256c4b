import * as v from "valibot";
import { EVENT_TYPES, RESOURCE_TYPES } from "@invoicing/core/events/types";
import { pathId } from "./common";

/** Requests of the events and webhook endpoints routes (docs/events.md); responses in resources.ts. */

export const eventListFilters = {
  type: v.optional(v.picklist(EVENT_TYPES, "must be an event type (docs/events.md)")),
  resourceType: v.optional(v.picklist(RESOURCE_TYPES, `must be one of ${RESOURCE_TYPES.join(", ")}`)),
  resourceId: v.optional(pathId),
};

const url = v.pipe(
  v.string(),
  v.minLength(1, "must not be empty"),
  v.maxLength(2048),
  v.url("must be an absolute URL"),
);
const eventTypes = v.pipe(
  v.array(v.picklist([...EVENT_TYPES, "*"], 'must be an event type (docs/events.md) or "*"')),
  v.minLength(1, 'must name at least one event type, or be ["*"]'),
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
