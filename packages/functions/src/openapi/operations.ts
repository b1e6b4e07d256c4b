import type { RouterRoute } from "hono/types";
import type * as v from "valibot";
import { NOT_KEPT } from "../http/idempotency";
import { isPublicSpace } from "../http/middleware";
import { isIdParam } from "../http/params";
import type { ProblemCode } from "../http/problems";
import { partOf, type Description, type Success } from "../http/describe";
import type { Tag } from "../http/tags";

/**
 * Every operation of the API, found by walking the routes (app/route-modules.ts allOperations): each route says in
 * its own chain what it is (`describe()`) and what it reads (http/validators.ts), and the rest follows
 * from the route — method, path, path parameters, public or not, idempotency. GET /openapi.json is
 * built from this list (openapi/document.ts), and the conformance test (test/openapi) makes the app
 * answer every entry. A route without `describe()` is an error here, so it cannot go undocumented.
 */

type Method = "get" | "post" | "put" | "patch" | "delete";

export interface Operation {
  operationId: string;
  method: Method;
  /** OpenAPI path template (`{id}`); id parameters are positive integers, `{publicToken}` a string. */
  path: string;
  tag: Tag;
  summary: string;
  description?: string;
  /** Reachable without an API key (http/middleware.ts). */
  public: boolean;
  /** Query parameters, as the valibot entries the route validates. */
  query?: v.ObjectEntries;
  /** A list endpoint: `limit`/`offset`/`cursor` and a `Link` header. */
  paginated?: true;
  body?: {
    /** A JSON body's schema; none for a binary body. */
    schema?: v.GenericSchema;
    /** An empty body reads as `{}` (action endpoints); the document calls it optional when `{}` is valid. */
    emptyAsObject: boolean;
    /** Read as raw bytes (the webhook's signature covers them), not as the API's JSON. */
    raw?: true;
    /** A binary body of one of these media types. */
    mediaTypes?: readonly string[];
  };
  /** Honours `If-Match` (412 precondition_failed). */
  ifMatch?: true;
  /** Idempotency-Key handling (http/idempotency.ts): kept for authenticated POSTs, ignored where a response holds a secret. */
  idempotency: "kept" | "ignored" | "none";
  headers?: Description["headers"];
  static?: true;
  success: Success;
  problems: readonly ProblemCode[];
}

/** Hono's `:name` path parameters as OpenAPI's `{name}`; `:token` is the document's `{publicToken}`. */
const templateOf = (path: string): string =>
  path.replace(/:([A-Za-z_]\w*)/g, (_, name: string) => `{${name === "token" ? "publicToken" : name}}`);

/** The path parameters of an OpenAPI path template. */
export const pathParameters = (template: string): string[] => [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);

export const hasIdParameter = (template: string): boolean => pathParameters(template).some(isIdParam);

/** The operations of some routes, in the order they were registered. */
export function operationsOf(routes: readonly RouterRoute[]): Operation[] {
  const byRoute = new Map<string, RouterRoute[]>();
  for (const route of routes) {
    if (route.method === "ALL") continue; // middleware mounted with .use()
    const key = `${route.method} ${route.path}`;
    byRoute.set(key, [...(byRoute.get(key) ?? []), route]);
  }
  return [...byRoute.values()].map((chain) => operationOf(chain));
}

function operationOf(chain: RouterRoute[]): Operation {
  const { method, path } = chain[0]!;
  const where = `${method} ${path}`;
  const parts = chain.map((r) => partOf(r.handler)).filter((p) => p !== undefined);
  let description: Description | undefined;
  let body: Operation["body"];
  let query: v.ObjectEntries | undefined;
  let paginated = false;
  let ifMatch = false;
  for (const part of parts) {
    if (part.kind === "description") {
      if (description) throw new Error(`${where}: describe() twice`);
      description = part.description;
    } else if (part.kind === "body") {
      if (body) throw new Error(`${where}: two body validators`);
      const { kind: _, ...rest } = part;
      body = rest;
    } else if (part.kind === "query") {
      query = part.entries;
      paginated = part.paginated;
    } else {
      ifMatch = true;
    }
  }
  if (!description) throw new Error(`${where} has no describe(): every route describes its operation (docs/routes.md)`);
  const lower = method.toLowerCase() as Method;
  const isPublic = description.public === true || isPublicSpace(path);
  const { problems = [], ...words } = description;
  return {
    ...words,
    method: lower,
    path: templateOf(path),
    public: isPublic,
    ...(query ? { query } : {}),
    ...(paginated ? { paginated: true as const } : {}),
    ...(body ? { body } : {}),
    ...(ifMatch ? { ifMatch: true as const } : {}),
    idempotency: lower === "post" && !isPublic ? (NOT_KEPT.has(path) ? "ignored" : "kept") : "none",
    problems,
  };
}
