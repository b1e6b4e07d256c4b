import { Hono } from "hono";
import { etagOf } from "@invoicing/core/db/versioning";
import { listEvents, toEvent } from "@invoicing/core/events/store";
import { listDeliveries, toDelivery } from "@invoicing/core/webhooks/deliveries";
import { redeliver } from "@invoicing/core/webhooks/redelivery";
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listEndpoints,
  rotateSecret,
  toWebhookEndpoint,
  updateEndpoint,
} from "@invoicing/core/webhooks/endpoints";
import type { AppEnv } from "../http/app-env";
import { deleted, describe, list, one } from "../http/describe";
import { pageResponse } from "../http/pagination";
import { verifiedKey } from "../http/middleware";
import { idParam } from "../http/params";
import { createEndpointBody, eventListFilters, updateEndpointBody } from "../schemas/events";
import { CreatedWebhookEndpoint, DeliveryResource, EventResource, WebhookEndpointResource } from "../schemas/resources";
import { actionBody, ifMatch, jsonBody, listQuery } from "../http/validators";

const tag = "Events";

/** The activity log and webhook endpoints (docs/events.md). */
export const events = new Hono<AppEnv>()
  .get(
    "/events",
    describe({
      operationId: "listEvents",
      tag,
      summary: "List events",
      description:
        "Newest first; kept 30 days. Derived from the table's change stream: they appear within seconds of the change.",
      success: list(EventResource, "A page of events, newest first."),
    }),
    listQuery(eventListFilters),
    async (c) => {
      const { page, type, resourceType, resourceId } = c.req.valid("query");
      const ctx = c.get("ctx");
      const filters = { type, resourceType, resourceId };
      return pageResponse(c, await listEvents(ctx.db, ctx.userId, filters, page, ctx.clock()), page, toEvent);
    },
  )
  .post(
    "/webhook-endpoints",
    describe({
      operationId: "createWebhookEndpoint",
      idempotency: "kept_without_secret",
      tag,
      summary: "Create a webhook endpoint",
      description:
        "The signing `secret` is in this response only (and in a rotation's). At most 10 endpoints per account. " +
        "A replay of this request with the same Idempotency-Key answers the same endpoint with `secret: null`: " +
        "the secret is never kept in an idempotency record (rotate it to get a new one).",
      success: {
        status: 201,
        description: "The new endpoint, with its secret.",
        schema: CreatedWebhookEndpoint,
        location: true,
        etag: true,
      },
      problems: ["webhook_url_not_allowed", "limit_exceeded"],
    }),
    jsonBody(createEndpointBody),
    async (c) => {
      await verifiedKey(c); // the URL's name is resolved: never for a key not yet known good
      const item = await createEndpoint(c.get("ctx"), c.req.valid("json"));
      return c.json({ ...toWebhookEndpoint(item), secret: item.secret }, 201, {
        Location: `/webhook-endpoints/${item.id}`,
        ETag: etagOf(item.version),
        "Cache-Control": "no-store",
      });
    },
  )
  .get(
    "/webhook-endpoints",
    describe({
      operationId: "listWebhookEndpoints",
      tag,
      summary: "List webhook endpoints",
      description: "Newest first; a short list (at most 10), not paginated; no secrets.",
      success: list(WebhookEndpointResource, "The account's endpoints."),
    }),
    async (c) => {
      const ctx = c.get("ctx");
      const items = await listEndpoints(ctx, ctx.userId);
      return c.json(items.sort((a, b) => b.id - a.id).map(toWebhookEndpoint));
    },
  )
  .get(
    "/webhook-endpoints/:id",
    describe({
      operationId: "getWebhookEndpoint",
      rebuilds: "WEBHOOK_ENDPOINT",
      tag,
      summary: "Get a webhook endpoint",
      success: one(WebhookEndpointResource, "The endpoint (no secret)."),
    }),
    async (c) => {
      const item = await getEndpoint(c.get("ctx"), idParam(c));
      return c.json(toWebhookEndpoint(item), 200, { ETag: etagOf(item.version) });
    },
  )
  .patch(
    "/webhook-endpoints/:id",
    describe({
      operationId: "updateWebhookEndpoint",
      tag,
      summary: "Update a webhook endpoint",
      success: one(WebhookEndpointResource, "The updated endpoint."),
      problems: ["webhook_url_not_allowed"],
    }),
    ifMatch,
    jsonBody(updateEndpointBody),
    async (c) => {
      await verifiedKey(c); // a new URL's name is resolved: never for a key not yet known good
      const item = await updateEndpoint(
        c.get("ctx"),
        idParam(c),
        c.req.valid("json"),
        c.req.valid("header")["if-match"],
      );
      return c.json(toWebhookEndpoint(item), 200, { ETag: etagOf(item.version) });
    },
  )
  .delete(
    "/webhook-endpoints/:id",
    describe({ operationId: "deleteWebhookEndpoint", tag, summary: "Delete a webhook endpoint", success: deleted }),
    async (c) => {
      await deleteEndpoint(c.get("ctx"), idParam(c));
      return c.body(null, 204);
    },
  )
  .get(
    "/webhook-endpoints/:id/deliveries",
    describe({
      operationId: "listWebhookDeliveries",
      tag,
      summary: "The endpoint's last 100 delivery attempts",
      description:
        "Newest first; a failed attempt names when the next one is due (`nextAttemptAt`, null once given up).",
      success: list(DeliveryResource, "The last 100 attempts."),
    }),
    async (c) => {
      const ctx = c.get("ctx");
      const endpoint = await getEndpoint(ctx, idParam(c));
      return c.json(await listDeliveries(ctx, ctx.userId, endpoint.id));
    },
  )
  .post(
    "/webhook-endpoints/:id/rotate-secret",
    describe({
      operationId: "rotateWebhookEndpointSecret",
      idempotency: "kept_without_secret",
      tag,
      summary: "Rotate a webhook endpoint's signing secret",
      description:
        "A new `secret`, shown in this response only. For 24 hours every delivery carries two signatures in " +
        "`webhook-signature` (space-separated `v1,…` entries: the new secret's and the replaced one's), so a " +
        "receiver verifying with either secret accepts it; then only the new secret signs. The endpoint's id, " +
        "deliveries and history are kept. A replay with the same Idempotency-Key rotates nothing and answers " +
        "`secret: null` (the secret is never kept in an idempotency record).",
      success: one(CreatedWebhookEndpoint, "The endpoint with its new secret."),
    }),
    actionBody,
    async (c) => {
      const item = await rotateSecret(c.get("ctx"), idParam(c));
      return c.json({ ...toWebhookEndpoint(item), secret: item.secret }, 200, {
        ETag: etagOf(item.version),
        "Cache-Control": "no-store",
      });
    },
  )
  .post(
    "/webhook-endpoints/:id/deliveries/:event/redeliver",
    describe({
      operationId: "redeliverWebhook",
      tag,
      summary: "Redeliver an event to a webhook endpoint",
      description:
        "The event again (`event`: its id, `evt_…`), to an endpoint it was sent to. While its automatic retry is " +
        "pending, that retry is moved to now (no second copy); once its attempts are over (succeeded, or given " +
        "up), one more attempt is added, due now, which is not retried by itself. Answered with that attempt, " +
        "`pending`: the `webhooks` job makes it within minutes, and `GET …/deliveries` shows its outcome. 404 " +
        "when the endpoint was never sent the event (or it is older than 30 days); 422 `invalid_transition` " +
        "while an attempt of it is in flight or already being redelivered, or when the endpoint is disabled.",
      success: { status: 200, description: "The redelivery, pending.", schema: DeliveryResource },
      problems: ["invalid_transition"],
    }),
    actionBody,
    async (c) => {
      const item = await redeliver(c.get("ctx"), idParam(c), c.req.param("event"));
      return c.json(toDelivery(item), 200);
    },
  );
