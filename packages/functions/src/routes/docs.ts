import { Hono } from "hono";
import type { AppEnv } from "../env";

let page: string | undefined;

/**
 * The document is built from every operation's schemas: loaded at the first request for it, so the
 * API Lambda's cold start does not evaluate it (npm run bench, "Lambda init").
 */
const documentModule = () => import("../openapi/document");
const docsPageModule = () => import("../openapi/docs-page");

/**
 * GET /openapi.json and GET /docs (API.md section 10): public, built from code once per process.
 * The document is the same for every caller (its server URL is relative), so it may be cached.
 */
export const docs = new Hono<AppEnv>()
  .get("/openapi.json", async (c) => {
    const { openApiJson } = await documentModule();
    return c.body(openApiJson(), 200, { "Content-Type": "application/json", "Cache-Control": "public, max-age=300" });
  })
  .get("/docs", async (c) => {
    page ??= (await docsPageModule()).docsPage();
    return c.html(page, 200, { "Cache-Control": "public, max-age=300" });
  });
