import { handle } from "hono/aws-lambda";
import { createApp } from "./app";
import { createDeps } from "./deps";

/** The API Lambda (API Gateway HTTP API, payload v2). Built once per container, at init. */
export const handler = handle(createApp(createDeps()));
