import { Hono } from "hono";
import { listEvents, toEvent } from "@invoicing/core/events/store";
import { listDeliveries } from "@invoicing/core/webhooks/deliveries";
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listEndpoints,
  toWebhookEndpoint,
  updateEndpoint,
} from "@invoicing/core/webhooks/endpoints";
import type { EventType, ResourceType } from "@invoicing/core/events/types";
import { etagOf } from "@invoicing/core/db/versioning";
import { readJson } from "../body";
import type { AppEnv } from "../env";
import { listQuery, pageResponse } from "../pagination";
import { idAndBody, idParam, ifMatch } from "../params";
import { createEndpointBody, eventListFilters, updateEndpointBody } from "../schemas/events";
import { validate } from "../validation";

/** The activity log and webhook endpoints (docs/events.md). */
export const events = new Hono<AppEnv>()
  .get("/events", async (c) => {
    const { page, query } = listQuery(c, eventListFilters);
    const ctx = c.get("ctx");
    const filters = { type: query.type as EventType | undefined, resourceType: query.resourceType as ResourceType | undefined, resourceId: query.resourceId };
    return pageResponse(c, await listEvents(ctx.db, ctx.userId, filters, page), page, toEvent);
  })
  .post("/webhook-endpoints", async (c) => {
    const body = validate(createEndpointBody, await readJson(c));
    const item = await createEndpoint(c.get("ctx"), body);
    // The secret is in this response only.
    return c.json({ ...toWebhookEndpoint(item), secret: item.secret }, 201, {
      Location: `/webhook-endpoints/${item.id}`,
      ETag: etagOf(item.version),
      "Cache-Control": "no-store",
    });
  })
  .get("/webhook-endpoints", async (c) => {
    const ctx = c.get("ctx");
    const items = await listEndpoints(ctx, ctx.userId);
    return c.json(items.sort((a, b) => b.id - a.id).map(toWebhookEndpoint));
  })
  .get("/webhook-endpoints/:id", async (c) => {
    const item = await getEndpoint(c.get("ctx"), idParam(c));
    return c.json(toWebhookEndpoint(item), 200, { ETag: etagOf(item.version) });
  })
  .patch("/webhook-endpoints/:id", async (c) => {
    const { id, body } = await idAndBody(c, updateEndpointBody);
    const item = await updateEndpoint(c.get("ctx"), id, body, ifMatch(c));
    return c.json(toWebhookEndpoint(item), 200, { ETag: etagOf(item.version) });
  })
  .delete("/webhook-endpoints/:id", async (c) => {
    await deleteEndpoint(c.get("ctx"), idParam(c));
    return c.body(null, 204);
  })
  .get("/webhook-endpoints/:id/deliveries", async (c) => {
    const ctx = c.get("ctx");
    const endpoint = await getEndpoint(ctx, idParam(c));
    return c.json(await listDeliveries(ctx, ctx.userId, endpoint.id));
  });
