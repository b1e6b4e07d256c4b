import type { Hono } from "hono";
import { hc } from "hono/client";
import type * as v from "valibot";
import type { routeModules } from "./app";
import type { AppEnv } from "./env";
import type { operations } from "./openapi/operations";
import type * as resources from "./schemas/resources";

/**
 * A typed client for TypeScript users, on hono's `hc`: paths, methods and path params come from
 * the routes themselves, response bodies too where a route answers with `c.json(...)`. Request
 * bodies and query strings are validated by the routes at runtime with valibot (not with hono's
 * validator middleware), so the route types lack them: they are added here from the OpenAPI
 * operations list, whose schemas are those the routes validate with. Usage in docs/client.md.
 *
 * Everything imported here but hono's small client is a type: using this file pulls no server
 * code into a bundle.
 */
type SchemaOf<T> = T extends Hono<AppEnv, infer S, "/"> ? S : never;
/** The app as the route modules of app.ts make it (each mounted at "/"). */
type RouteSchema = SchemaOf<(typeof routeModules)[number]>;

type Operation = (typeof operations)[number];
/** `/invoices/{id}/send` → `/invoices/:id/send`. */
type HonoPath<P extends string> = P extends `${infer A}{${infer N}}${infer B}` ? `${A}:${N}${HonoPath<B>}` : P;
/** The documented operation of hono path P and client method M (`$post`). */
type OperationOf<P, M> = Operation extends infer O
  ? O extends { path: infer OP extends string; method: infer OM extends string }
    ? HonoPath<OP> extends P
      ? `$${OM}` extends M
        ? O
        : never
      : never
    : never
  : never;
type BodyInput<O> = O extends { body: { schema: infer S extends v.GenericSchema; required: infer R } }
  ? R extends true
    ? { json: v.InferInput<S> }
    : { json?: v.InferInput<S> }
  : unknown;
type QueryInput<O> = O extends { query: infer Q extends v.ObjectEntries } ? { query?: v.InferInput<v.ObjectSchema<Q, undefined>> } : unknown;
type WithInputs<S> = {
  [P in keyof S]: {
    [M in keyof S[P]]: S[P][M] extends { input: infer I }
      ? Omit<S[P][M], "input"> & { input: I & BodyInput<OperationOf<P, M>> & QueryInput<OperationOf<P, M>> }
      : S[P][M];
  };
};

export type AppType = Hono<AppEnv, WithInputs<RouteSchema>, "/">;

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

const asFetch = (f: NonNullable<ClientOptions["fetch"]>): typeof fetch => async (input, init) => f(input, init);

/** A client of the API at `baseUrl` (e.g. `http://localhost:3000`) acting with `apiKey`. */
export function createClient(baseUrl: string, apiKey: string, options: ClientOptions = {}) {
  return hc<AppType>(baseUrl, {
    ...(options.fetch ? { fetch: asFetch(options.fetch) } : {}),
    headers: { ...options.headers, Authorization: `Bearer ${apiKey}` },
  });
}

export type ApiClient = ReturnType<typeof createClient>;
