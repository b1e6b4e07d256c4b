import { Hono } from "hono";
import * as v from "valibot";
import { createApiKey, listApiKeys, revokeApiKey } from "@invoicing/core/keys/api-keys";
import { KEY_SCOPES } from "@invoicing/core/keys/resource";
import type { AppEnv } from "../http/app-env";
import { deleted, describe, list } from "../http/describe";
import { idParam } from "../http/params";
import { timestamp } from "../schemas/common";
import { ApiKey, CreatedApiKey } from "../schemas/resources";
import { jsonBody } from "../http/validators";

const createApiKeyBody = v.strictObject({
  name: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(200)))),
  scope: v.optional(v.picklist(KEY_SCOPES)),
  expiresAt: v.optional(v.nullable(timestamp)),
});

const tag = "API keys";

export const apiKeys = new Hono<AppEnv>()
  .post(
    "/api-keys",
    describe({
      operationId: "createApiKey",
      idempotency: "not_kept",
      tag,
      summary: "Create an API key",
      description:
        "The plain key is in this response only (it is stored as a hash). The body may be empty. " +
        "`scope` `read_only` makes a key that may only GET (403 insufficient_scope for anything else); " +
        "`expiresAt` (in the future, else 400) is when it stops working (401 from then on). " +
        "A read-only key cannot create keys.",
      success: {
        status: 201,
        description: "The new key, with its secret `key`.",
        schema: CreatedApiKey,
        location: true,
      },
    }),
    jsonBody(createApiKeyBody, { emptyAsObject: true }),
    async (c) => {
      const ctx = c.get("ctx");
      const { name, scope, expiresAt } = c.req.valid("json");
      const created = await createApiKey(ctx.db, ctx.userId, name ?? null, ctx.clock(), { scope, expiresAt });
      return c.json(created, 201, { Location: `/api-keys/${created.id}`, "Cache-Control": "no-store" });
    },
  )
  .get(
    "/api-keys",
    describe({
      operationId: "listApiKeys",
      tag,
      summary: "List the user's API keys",
      description: "A short list, not paginated; no secrets.",
      success: list(ApiKey, "The user's keys."),
    }),
    async (c) => {
      const ctx = c.get("ctx");
      return c.json(await listApiKeys(ctx.db, ctx.userId));
    },
  )
  .delete(
    "/api-keys/:id",
    describe({
      operationId: "deleteApiKey",
      tag,
      summary: "Revoke an API key",
      description: "The key stops working at once (its next request is a 401).",
      success: deleted,
    }),
    async (c) => {
      const id = idParam(c);
      const ctx = c.get("ctx");
      await revokeApiKey(ctx.db, ctx.userId, id);
      return c.body(null, 204);
    },
  );
