import type { Hono } from "hono";
import { hc } from "hono/client";
import type * as v from "valibot";
import type { AppEnv } from "./http/app-env";
import type { routeModules } from "./app/route-modules";
import type * as resources from "./schemas/resources";

/**
 * A typed client for TypeScript users, on hono's `hc`: paths, methods, path params, request bodies,
 * query strings and If-Match all come from the routes themselves — their validation middleware
 * (http/validators.ts) carries the valibot schemas they validate with — and response bodies too where a
 * route answers with `c.json(...)`. Usage in docs/client.md.
 *
 * Everything imported here but hono's small client is a type: using this file pulls no server
 * code into a bundle.
 */
type SchemaOf<T> = T extends Hono<AppEnv, infer S, "/"> ? S : never;
/** The app as the route modules make it (each mounted at "/"). */
type RouteSchema = SchemaOf<(typeof routeModules)[number]>;

export type AppType = Hono<AppEnv, RouteSchema, "/">;

/**
 * The response shapes the OpenAPI document describes (schemas/resources.ts). Routes that answer
 * through a shared helper give `unknown` from `res.json()`: type it with these.
 */
export type LineItem = v.InferOutput<typeof resources.LineItem>;
export type Client = v.InferOutput<typeof resources.Client>;
export type Invoice = v.InferOutput<typeof resources.Invoice>;
export type Estimate = v.InferOutput<typeof resources.Estimate>;
export type RecurringSchedule = v.InferOutput<typeof resources.RecurringSchedule>;
export type ApiKey = v.InferOutput<typeof resources.ApiKey>;
export type CreatedApiKey = v.InferOutput<typeof resources.CreatedApiKey>;
export type Reminder = v.InferOutput<typeof resources.Reminder>;
export type Payment = v.InferOutput<typeof resources.Payment>;
export type Problem = v.InferOutput<typeof resources.Problem>;

export interface ClientOptions {
  /** Another fetch (a test's `app.request`, a retrying fetch, …); the global one by default. */
  fetch?: (input: RequestInfo | URL, init?: RequestInit) => Response | Promise<Response>;
  /** Headers for every request (an `Idempotency-Key` goes per request: `client.x.$post(args, { headers })`). */
  headers?: Record<string, string>;
}

const asFetch =
  (f: NonNullable<ClientOptions["fetch"]>): typeof fetch =>
  async (input, init) =>
    f(input, init);

/** A client of the API at `baseUrl` (e.g. `http://localhost:3000`) acting with `apiKey`. */
export function createClient(baseUrl: string, apiKey: string, options: ClientOptions = {}) {
  return hc<AppType>(baseUrl, {
    ...(options.fetch ? { fetch: asFetch(options.fetch) } : {}),
    headers: { ...options.headers, Authorization: `Bearer ${apiKey}` },
  });
}

export type ApiClient = ReturnType<typeof createClient>;
