import { handle } from "hono/aws-lambda";
import { apiRouteModules } from "@invoicing/functions/app/api-routes";
import { buildApp } from "@invoicing/functions/app/build-app";
import { createBaseDeps } from "@invoicing/functions/capabilities/base";

/**
 * The API function with its routes registered eagerly (every route module imported at init), as
 * lambda/api.ts was before the lazy route table: what bench/coldstart.ts weighs the lazy table against.
 */
export const handler = handle(buildApp(createBaseDeps(process.env), apiRouteModules));
