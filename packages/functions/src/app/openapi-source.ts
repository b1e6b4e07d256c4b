import { Hono } from "hono";
import type { AppEnv } from "../http/app-env";

let json: Promise<string> | undefined;

/**
 * GET /openapi.json's document as JSON text, built once per process at the first request for it
 * (it depends on code only): walking every route module and converting its schemas is work the
 * cold start of a function need not do. Imported lazily so that a function serving the document
 * loads the other functions' route modules only then.
 */
const openApiJson = (): Promise<string> =>
  (json ??= Promise.all([import("../openapi/document"), import("./route-modules")]).then(
    ([{ buildOpenApiDocument }, { allOperations }]) => JSON.stringify(buildOpenApiDocument(allOperations())),
  ));

/**
 * Gives an app the OpenAPI document (routes/docs.ts reads it), mounted by the apps that serve it
 * (lambda/documents.ts, app/create-app.ts). Through the app, not an import, because the document
 * describes every route module, routes/docs.ts among them: importing it from there closed a cycle.
 */
export const openApiSource = new Hono<AppEnv>().use("*", async (c, next) => {
  c.set("openApiJson", openApiJson);
  await next();
});
