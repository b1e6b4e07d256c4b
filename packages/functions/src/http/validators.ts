import type { MiddlewareHandler } from "hono";
import * as v from "valibot";
import type { PageRequest } from "@invoicing/core/db/pagination";
import type { FieldError } from "@invoicing/core/errors";
import { readBodyBytes, readJson, readRawBody } from "./body";
import type { AppEnv } from "./app-env";
import { withPart } from "./describe";
import { verifiedKey } from "./middleware";
import { checkPathIds } from "./params";
import { HttpProblem, validationProblem } from "./problems";
import { emptyBody, pagination } from "../schemas/common";

/**
 * The request's parts, validated by middleware in a route's chain: the handler reads them with
 * `c.req.valid("json" | "query" | "header")`, hono's typed client (api-client.ts) takes its input
 * types from them, and the OpenAPI document its request schemas (each is tagged for
 * openapi/operations.ts). One schema, three uses.
 *
 * Not hono's `validator("json")`: it reads a body that is not JSON as `{}`, where the API answers
 * in a fixed order — 413 too large → 415 not JSON → 400 malformed → 400 bad path id → 400 the
 * body's own errors (docs/routes.md).
 */

/** The typed client's `json`: optional where an empty body is accepted (read as `{}`, and `{}` is valid). */
type JsonIn<S extends v.GenericSchema, EmptyAsObject extends boolean> = EmptyAsObject extends true
  ? // biome-ignore lint/complexity/noBannedTypes: `{}` here asks whether an empty object is valid input
    {} extends v.InferInput<S>
    ? { json?: v.InferInput<S> }
    : { json: v.InferInput<S> }
  : { json: v.InferInput<S> };

/**
 * A JSON body valid against `schema`. `emptyAsObject`: an empty body reads as `{}` (action
 * endpoints, whose body is optional; the document calls a body optional when `{}` is valid).
 */
export function jsonBody<S extends v.GenericSchema, EmptyAsObject extends boolean = false>(
  schema: S,
  options: { emptyAsObject?: EmptyAsObject } = {},
): MiddlewareHandler<AppEnv, string, { in: JsonIn<S, EmptyAsObject>; out: { json: v.InferOutput<S> } }> {
  const optional = options.emptyAsObject === true;
  const handler: MiddlewareHandler<AppEnv> = async (c, next) => {
    const raw = await readJson(c, { optional }); // 413 → 415 → malformed JSON
    checkPathIds(c); // a bad path id before the body's own errors
    c.req.addValidatedData("json", validate(schema, raw) as object);
    await next();
  };
  return withPart(handler, { kind: "body", schema, emptyAsObject: optional });
}

/** The body of an action endpoint (finalize, void, accept, …): empty, or `{}`. */
export const actionBody = jsonBody(emptyBody, { emptyAsObject: true });

/**
 * A body read as raw text (`c.get("rawBody")`), for a webhook whose signature covers the exact
 * bytes; `schema` only documents it. Only the size is checked here (413).
 */
export function rawBody(schema: v.GenericSchema): MiddlewareHandler<AppEnv> {
  return withPart<MiddlewareHandler<AppEnv>>(
    async (c, next) => {
      await readRawBody(c);
      await next();
    },
    { kind: "body", schema, emptyAsObject: false, raw: true },
  );
}

/**
 * A binary body of one of `mediaTypes` (an uploaded image): 413 when too large, 415 when its
 * Content-Type is not one of them. The bytes are `c.get("bodyBytes")`, the type `c.req.header("content-type")`.
 * The route decodes them (an image is decompressed: costly), so the API key is verified before the
 * body is even read: a made-up key gets its 401 without the service reading, let alone inflating,
 * what it sent (issue 29, finding 1).
 */
export function binaryBody(mediaTypes: readonly string[]): MiddlewareHandler<AppEnv> {
  return withPart<MiddlewareHandler<AppEnv>>(
    async (c, next) => {
      await verifiedKey(c);
      await readBodyBytes(c);
      const type = c.req.header("content-type")?.split(";")[0]?.trim().toLowerCase();
      if (!type || !mediaTypes.includes(type)) {
        throw new HttpProblem("unsupported_media_type", `the body must be sent as ${mediaTypes.join(" or ")}`);
      }
      await next();
    },
    { kind: "body", emptyAsObject: false, mediaTypes },
  );
}

type ListQueryIn<F extends v.ObjectEntries> = v.InferInput<v.ObjectSchema<typeof pagination & F, undefined>>;
type ListQueryOut<F extends v.ObjectEntries> = v.InferOutput<v.ObjectSchema<F, undefined>> & { page: PageRequest };

/**
 * A list's query: pagination (`limit`, `offset`, `cursor`) plus the list's own `filters`; unknown
 * parameters are ignored. `c.req.valid("query")` is `{ page, ...filters }`; answer with
 * pagination.ts pageResponse, which adds the `Link` the document promises for lists.
 */
export function listQuery<F extends v.ObjectEntries = Record<never, never>>(
  filters: F = {} as F,
): MiddlewareHandler<AppEnv, string, { in: { query?: ListQueryIn<F> }; out: { query: ListQueryOut<F> } }> {
  const entries = { ...pagination, ...filters };
  const schema = v.object(entries);
  const handler: MiddlewareHandler<AppEnv> = async (c, next) => {
    const { limit, offset, cursor, ...rest } = validate(schema, c.req.query()) as Record<string, unknown> & {
      limit: number;
      offset: number;
      cursor?: string;
    };
    c.req.addValidatedData("query", { ...rest, page: { limit, offset, cursor } });
    await next();
  };
  return withPart(handler, { kind: "query", entries, paginated: true });
}

/**
 * A query of named parameters, none of them paging (`?format=ubl`): unknown ones are ignored, a bad
 * value is a 400 naming it. `c.req.valid("query")` is the parsed object.
 */
export function queryParams<E extends v.ObjectEntries>(
  entries: E,
): MiddlewareHandler<
  AppEnv,
  string,
  {
    in: { query?: v.InferInput<v.ObjectSchema<E, undefined>> };
    out: { query: v.InferOutput<v.ObjectSchema<E, undefined>> };
  }
> {
  const schema = v.object(entries);
  const handler: MiddlewareHandler<AppEnv> = async (c, next) => {
    c.req.addValidatedData("query", validate(schema, c.req.query()) as object);
    await next();
  };
  return withPart(handler, { kind: "query", entries, paginated: false });
}

/**
 * The operation honours `If-Match` (412 precondition_failed on a stale one):
 * `c.req.valid("header")["if-match"]` is the ETag the change is based on, if any.
 */
export const ifMatch: MiddlewareHandler<
  AppEnv,
  string,
  { in: { header?: { "if-match"?: string } }; out: { header: { "if-match"?: string } } }
> = withPart<MiddlewareHandler<AppEnv>>(
  async (c, next) => {
    const value = c.req.header("if-match");
    c.req.addValidatedData("header", value === undefined ? {} : { "if-match": value });
    await next();
  },
  { kind: "ifMatch" },
);

const OBJECT_TYPES = new Set(["object", "strict_object", "loose_object", "object_with_rest"]);

/** Validates with a valibot schema; every issue becomes an `errors[]` entry with its dot path. */
function validate<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  // valibot's object schemas take an array for an object (typeof [] is "object"): `[]` would pass as `{}`.
  if (Array.isArray(input) && OBJECT_TYPES.has(schema.type)) {
    throw validationProblem([{ path: "", message: "must be a JSON object" }]);
  }
  const result = v.safeParse(schema, input, { abortEarly: false });
  if (result.success) return result.output;
  throw validationProblem(toFieldErrors(result.issues));
}

function toFieldErrors(issues: readonly v.BaseIssue<unknown>[]): FieldError[] {
  const errors: FieldError[] = [];
  const arraysAt = new Set<string>();
  for (const issue of issues) {
    const arrayAt = arrayForObject(issue);
    if (arrayAt === undefined) errors.push({ path: v.getDotPath(issue) ?? "", message: issueMessage(issue) });
    else if (!arraysAt.has(arrayAt)) {
      arraysAt.add(arrayAt);
      errors.push({ path: arrayAt, message: OBJECT_EXPECTED });
    }
  }
  return errors;
}

const OBJECT_EXPECTED = "expected an object";

/**
 * The path of an array given where an object belongs, if the issue comes from one. valibot's object
 * schemas take an array for an object too (see validate), so `"address": ["x"]` gives an unknown
 * field `address.0` and a missing `address.country`: one mistake, reported once at `address`.
 */
function arrayForObject(issue: v.BaseIssue<unknown>): string | undefined {
  const path = issue.path ?? [];
  const at = path.findIndex((item) => item.type === "object" && Array.isArray(item.input));
  return at < 0
    ? undefined
    : path
        .slice(0, at)
        .map((item) => String(item.key))
        .join(".");
}

function issueMessage(issue: v.BaseIssue<unknown>): string {
  // A value of another type where an object belongs (not one of its keys: those expect `never`).
  if (OBJECT_TYPES.has(issue.type) && issue.expected === "Object" && issue.received !== "undefined")
    return OBJECT_EXPECTED;
  if (issue.kind === "schema" && issue.received === "undefined") return "is required";
  if (issue.type === "strict_object" || issue.type === "never") return "unknown or read-only field";
  return issue.message;
}
