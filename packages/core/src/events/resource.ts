import * as v from "valibot";
import { idOut, timestampOut } from "../resource";
import { EVENT_TYPES, RESOURCE_TYPES } from "./types";

/** The public Event's response shape (see ../resource.ts); store.ts holds the stored item. */
export const Event = v.strictObject({
  id: v.pipe(v.string(), v.description("Derived from the change; the webhook-id of its deliveries")),
  type: v.picklist(EVENT_TYPES),
  createdAt: timestampOut,
  resourceType: v.picklist(RESOURCE_TYPES),
  resourceId: idOut,
  data: v.pipe(
    v.record(v.string(), v.unknown()),
    v.description("The resource after the change (before it, for *.deleted)"),
  ),
});
export type Event = v.InferOutput<typeof Event>;
