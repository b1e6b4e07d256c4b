import { handle } from "hono/aws-lambda";
import { createBaseDeps } from "./capabilities/base";
import { documentRouteModules } from "./documents-routes";
import { buildApp } from "./spine";

/**
 * The documents Lambda: API Gateway sends it every documents path (infra/api.ts), with the same
 * spine (auth, errors, 405) as the API. Its own function keeps pdf-lib (and the e-invoice writer)
 * out of the API's bundle. It needs no capability: it reads the table and renders.
 */
export const handler = handle(buildApp(createBaseDeps(process.env), documentRouteModules));
