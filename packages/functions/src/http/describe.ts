import type { MiddlewareHandler } from "hono";
import type { RouterRoute } from "hono/types";
import type * as v from "valibot";
import type { Kind } from "@invoicing/core/db/keys";
import type { AppEnv } from "./app-env";
import type { ProblemCode } from "./problems";
import type { Tag } from "./tags";

/**
 * How a route describes its operation, next to its handler (docs/routes.md):
 *
 *   .patch("/clients/:id", describe({ … }), ifMatch, jsonBody(updateClientBody), async (c) => …)
 *
 * Each piece of the chain that says something about the operation — `describe()` here, the body,
 * query and If-Match middleware of http/validators.ts — is tagged with what it says (a RoutePart).
 * GET /openapi.json walks the app's routes, reads the parts of each (openapi/operations.ts) and
 * derives the rest from the route itself: method and path, path parameters, idempotency (http/idempotency.ts reads the
 * description too: `idempotency`, `rebuilds`). So nothing is written twice, and this module,
 * which every route loads, holds no JSON Schema code: that loads with the document only.
 */

export interface Success {
  status: 200 | 201 | 204 | 303;
  description: string;
  /** A JSON body of this schema (an array of it with `array`). No schema and no mediaType: no body. */
  schema?: v.GenericSchema;
  array?: true;
  /** A non-JSON body (the public HTML pages, PDFs, images, XML). */
  mediaType?: "text/html" | "application/pdf" | "application/xml" | "image/png" | "image/jpeg";
  /** The JSON body is also given as CSV (`format=csv`: a header row of the field names, then the rows). */
  csv?: true;
  location?: true;
  etag?: true;
}

/** What only words can say about an operation; the route and its middleware say the rest. */
export interface Description {
  operationId: string;
  tag: Tag;
  summary: string;
  description?: string;
  success: Success;
  /** The problems particular to this operation; those that follow from its shape are added by document.ts. */
  problems?: readonly ProblemCode[];
  /** Headers the operation reads besides the API's own. */
  headers?: readonly { name: string; required: boolean; description: string }[];
  /** Touches no database: no 503. */
  static?: true;
  /**
   * Reachable without an API key (the health check, the API's description, the card processor's
   * webhook). Paths under /public/ are public without saying so (http/middleware.ts).
   */
  public?: true;
  /**
   * A POST's Idempotency-Key record (http/idempotency.ts), when not the whole response:
   * `not_kept`, the response is never kept (POST /api-keys shows its secret once; the header is
   * ignored); `kept_without_secret`, kept with `secret` set to null, so the secret lives only where
   * it is used (the endpoint item) and a replay still never repeats the change.
   */
  idempotency?: "not_kept" | "kept_without_secret";
  /**
   * A GET that reads one record of this kind: a lost idempotent response that created or changed
   * such a record is rebuilt through it (http/idempotency.ts recover). Its path parameters are the
   * record's ids, in order (`PAYMENT#<invoice id>#<payment id>` → `/invoices/:id/payments/:paymentId`).
   */
  rebuilds?: RecordKind;
}

/** The kinds of record a kept POST may create or change (their sort key's prefix). */
export type RecordKind = Exclude<Kind, "APIKEY"> | "WEBHOOK_ENDPOINT" | "PAYMENT";

/** What one handler of a route's chain tells the document. */
type RoutePart =
  | { kind: "description"; description: Description }
  | {
      kind: "body";
      /** A JSON body's schema (also the webhook's raw one); none for a binary body. */
      schema?: v.GenericSchema;
      emptyAsObject: boolean;
      /** Read as raw text: the webhook, whose signature covers the exact bytes. */
      raw?: true;
      /** A binary body of one of these types (http/validators.ts binaryBody). */
      mediaTypes?: readonly string[];
    }
  /** `paginated`: a list (listQuery), with `limit`/`offset`/`cursor` and a `Link` header. */
  | { kind: "query"; entries: v.ObjectEntries; paginated: boolean }
  | { kind: "ifMatch" };

const parts = new WeakMap<object, RoutePart>();

/** Tags a handler with what it tells the document. */
export function withPart<H extends object>(handler: H, part: RoutePart): H {
  parts.set(handler, part);
  return handler;
}

/** What a registered handler tells the document, if anything. */
export const partOf = (handler: unknown): RoutePart | undefined =>
  typeof handler === "function" ? parts.get(handler) : undefined;

/** The description among the handlers of one route (method and path), as registered or matched. */
export function descriptionOf(routes: readonly RouterRoute[], method: string, path: string): Description | undefined {
  for (const route of routes) {
    if (route.method !== method || route.path !== path) continue;
    const part = partOf(route.handler);
    if (part?.kind === "description") return part.description;
  }
  return undefined;
}

/** The operation's words, as a middleware that does nothing at request time. */
export function describe(description: Description): MiddlewareHandler<AppEnv> {
  return withPart<MiddlewareHandler<AppEnv>>((_c, next) => next(), { kind: "description", description });
}

// The usual success responses.
export const list = (schema: v.GenericSchema, description: string): Success => ({
  status: 200,
  description,
  schema,
  array: true,
});
export const one = (schema: v.GenericSchema, description: string): Success => ({
  status: 200,
  description,
  schema,
  etag: true,
});
export const created = (schema: v.GenericSchema, description: string): Success => ({
  status: 201,
  description,
  schema,
  location: true,
  etag: true,
});
export const deleted: Success = { status: 204, description: "Deleted; no body." };
