import { handle } from "hono/aws-lambda";
import { apiRouteModules } from "./api-routes";
import { createDeps } from "./deps";
import { buildApp } from "./spine";

/** The API Lambda (API Gateway HTTP API, payload v2, $default route). Built once per container, at init. */
export const handler = handle(buildApp(createDeps(), apiRouteModules));
