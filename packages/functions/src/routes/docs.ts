import { Hono } from "hono";
import type { AppEnv } from "../env";
import { openApiJson } from "../openapi/document";
import { docsPage } from "../openapi/docs-page";

let page: string | undefined;

/**
 * GET /openapi.json and GET /docs (API.md section 10): public, built from code once per process.
 * The document is the same for every caller (its server URL is relative), so it may be cached.
 */
export const docs = new Hono<AppEnv>()
  .get("/openapi.json", (c) => c.body(openApiJson(), 200, { "Content-Type": "application/json", "Cache-Control": "public, max-age=300" }))
  .get("/docs", (c) => c.html((page ??= docsPage()), 200, { "Cache-Control": "public, max-age=300" }));
