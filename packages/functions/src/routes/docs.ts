import { Hono } from "hono";
import * as v from "valibot";
import type { AppEnv } from "../http/app-env";
import { describe } from "../http/describe";

let page: string | undefined;

const docsPageModule = () => import("../openapi/docs-page");

/**
 * GET /openapi.json and GET /docs: public, built from code once per process. The document is the
 * same for every caller (its server URL is relative), so it may be cached.
 */
export const docs = new Hono<AppEnv>()
  .get(
    "/openapi.json",
    describe({
      operationId: "getOpenApiDocument",
      tag: "Service",
      summary: "This OpenAPI 3.1 document",
      static: true,
      public: true,
      success: { status: 200, description: "The document.", schema: v.looseObject({ openapi: v.literal("3.1.0") }) },
    }),
    async (c) => {
      const openApiJson = c.get("openApiJson");
      if (!openApiJson) throw new Error("this app serves no OpenAPI document: mount app/openapi-source.ts");
      return c.body(await openApiJson(), 200, {
        "Content-Type": "application/json",
        "Cache-Control": "public, max-age=300",
      });
    },
  )
  .get(
    "/docs",
    describe({
      operationId: "getDocs",
      tag: "Service",
      summary: "This document, rendered",
      description:
        "An HTML page that renders this document (served whole by the API: no CDN) and explains each problem type.",
      static: true,
      public: true,
      success: { status: 200, description: "The page.", mediaType: "text/html" },
    }),
    async (c) => {
      page ??= (await docsPageModule()).docsPage();
      return c.html(page, 200, { "Cache-Control": "public, max-age=300" });
    },
  );
