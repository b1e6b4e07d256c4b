import { Hono } from "hono";
import * as v from "valibot";
import { createApiKey, listApiKeys, revokeApiKey } from "@invoicing/core/keys/api-keys";
import { readJson } from "../body";
import type { AppEnv } from "../env";
import { idParam } from "../params";
import { validate } from "../validation";

export const createApiKeyBody = v.strictObject({
  name: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(200)))),
});

export const apiKeys = new Hono<AppEnv>()
  .post("/api-keys", async (c) => {
    const body = validate(createApiKeyBody, await readJson(c, { optional: true }));
    const ctx = c.get("ctx");
    const created = await createApiKey(ctx.db, ctx.userId, body.name ?? null, ctx.clock());
    return c.json(created, 201, { Location: `/api-keys/${created.id}`, "Cache-Control": "no-store" });
  })
  .get("/api-keys", async (c) => {
    const ctx = c.get("ctx");
    return c.json(await listApiKeys(ctx.db, ctx.userId));
  })
  .delete("/api-keys/:id", async (c) => {
    const id = idParam(c);
    const ctx = c.get("ctx");
    await revokeApiKey(ctx.db, ctx.userId, id);
    return c.body(null, 204);
  });
