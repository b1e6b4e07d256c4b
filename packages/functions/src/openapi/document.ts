import * as v from "valibot";
import type { JsonSchema } from "@valibot/to-json-schema";
import { isIdParam } from "../http/params";
import { problemStatus, type ProblemCode } from "../http/problems";
import { COMPONENT_PREFIX, componentSchemas, jsonSchemaOf } from "./json-schema";
import { hasIdParameter, pathParameters, type Operation } from "./operations";
import { PROBLEM_TYPES } from "../schemas/problem-types";
import { TAGS } from "../http/tags";

/**
 * The OpenAPI 3.1 document of the API (GET /openapi.json), built from the operations the routes
 * describe (openapi/operations.ts walks them) and their valibot schemas. Besides each operation's
 * own problems, the ones that follow from its shape are added here, in one place: a path id → 400 + 404, a body → 413/415/400, If-Match → 412, an
 * idempotent POST → 409/422, an API key → 401 (and 403 for a read-only key, on every method but
 * GET), a database → 503, anything → 500.
 */

type Json = Record<string, unknown>;

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** The problems an operation can answer, in the API's precedence order (401 → … → 503, 500). */
function problemsOf(op: Operation): ProblemCode[] {
  const codes = new Set<ProblemCode>();
  if (!op.public) codes.add("unauthorized");
  if (!op.public && op.method !== "get") codes.add("insufficient_scope");
  // Every authenticated route counts against its user's rate, every public link against its token's.
  if (!op.public || op.path.startsWith("/public/")) codes.add("rate_limited");
  const hasPathId = hasIdParameter(op.path);
  const jsonBody = op.body && !op.body.raw && !op.body.mediaTypes;
  if (op.body) {
    codes.add("payload_too_large");
    if (!op.body.raw) codes.add("unsupported_media_type");
    if (jsonBody) {
      codes.add("malformed_json");
      codes.add("validation_error");
    }
  }
  if (hasPathId || op.query || jsonBody || op.idempotency === "kept") codes.add("validation_error");
  if (pathParameters(op.path).length > 0) codes.add("not_found");
  if (op.ifMatch) codes.add("precondition_failed");
  if (op.idempotency === "kept") {
    codes.add("idempotency_key_in_use");
    codes.add("idempotency_key_reused");
  }
  for (const code of op.problems) codes.add(code);
  if (!op.static) codes.add("service_unavailable");
  codes.add("internal_error");
  return [...codes];
}

function parameters(op: Operation): Json[] {
  const params: Json[] = [];
  for (const name of pathParameters(op.path)) params.push(pathParameter(name));
  if (op.query) {
    const schema = jsonSchemaOf(v.object(op.query)) as { properties?: Record<string, JsonSchema> };
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      params.push({
        name,
        in: "query",
        required: false,
        schema: property,
        ...(name === "cursor" ? { description: CURSOR } : {}),
      });
    }
  }
  if (op.ifMatch) params.push(ref("parameters", "IfMatch"));
  const idempotency = op.idempotency;
  if (idempotency === "kept") params.push(ref("parameters", "IdempotencyKey"));
  if (idempotency === "ignored")
    params.push({
      ...IDEMPOTENCY_KEY,
      description: "Accepted and ignored here: this response holds a secret, so it is never kept or replayed.",
    });
  for (const h of op.headers ?? [])
    params.push({
      name: h.name,
      in: "header",
      required: h.required,
      description: h.description,
      schema: { type: "string" },
    });
  return params;
}

const CURSOR =
  "Opaque token from the `Link` header of the previous page; resumes right after it. A malformed or foreign cursor is ignored and `offset` alone decides.";

/** `{id}` and `{publicToken}` are shared components; other id parameters (`{deliveryId}`) are alike. */
function pathParameter(name: string): Json {
  if (name === "id") return ref("parameters", "Id");
  if (name === "publicToken") return ref("parameters", "PublicToken");
  if (isIdParam(name)) return { ...ID_PARAMETER, name };
  return { name, in: "path", required: true, schema: { type: "string" } };
}

function requestBody(op: Operation): Json | undefined {
  if (!op.body) return undefined;
  if (op.body.mediaTypes) {
    const content = op.body.mediaTypes.map((type) => [type, { schema: { type: "string", contentMediaType: type } }]);
    return { required: true, content: Object.fromEntries(content) };
  }
  if (!op.body.schema) throw new Error(`${op.operationId}: a JSON body needs its schema`);
  const schema = jsonSchemaOf(op.body.schema);
  // Optional when an empty body is read as `{}` and `{}` is valid (action endpoints).
  const required = !op.body.emptyAsObject || !v.safeParse(op.body.schema, {}).success;
  return {
    required,
    ...(required ? {} : { description: "May be empty." }),
    content: { "application/json": { schema } },
  };
}

function successResponse(op: Operation): Json {
  const s = op.success;
  const headers: Json = { "X-Request-Id": ref("headers", "X-Request-Id") };
  if (s.location) headers.Location = ref("headers", "Location");
  if (s.etag) headers.ETag = ref("headers", "ETag");
  if (op.paginated) headers.Link = ref("headers", "Link");
  if (op.idempotency === "kept") headers["Idempotent-Replayed"] = ref("headers", "Idempotent-Replayed");
  const response: Json = { description: s.description, headers };
  if (s.schema) {
    const item = jsonSchemaOf(s.schema);
    const content: Json = { "application/json": { schema: s.array ? { type: "array", items: item } : item } };
    if (s.csv) content["text/csv"] = { schema: { type: "string", contentMediaType: "text/csv" } };
    response.content = content;
  } else if (s.mediaType) {
    const schema = s.mediaType === "text/html" ? { type: "string" } : { type: "string", contentMediaType: s.mediaType };
    response.content = { [s.mediaType]: { schema } };
  }
  return response;
}

/**
 * One response per error status, its body a Problem whose `code` is narrowed to the codes this
 * operation can give with that status — so the conformance test also checks which errors occur.
 */
function problemResponses(op: Operation): Record<string, Json> {
  const byStatus = new Map<number, ProblemCode[]>();
  for (const code of problemsOf(op)) {
    const status = problemStatus(code);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, Json> = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const headers: Json = { "X-Request-Id": ref("headers", "X-Request-Id") };
    if (status === 401) headers["WWW-Authenticate"] = ref("headers", "WWW-Authenticate");
    if (status === 503 || status === 429) headers["Retry-After"] = ref("headers", "Retry-After");
    const narrowed: Json = { properties: { code: { type: "string", enum: codes } } };
    // `errors[]` comes with validation_error, always.
    if (codes.includes("validation_error")) {
      const ifValidation = { properties: { code: { const: "validation_error" } } };
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, not a thenable
      Object.assign(narrowed, { if: ifValidation, then: { required: ["errors"] } });
    }
    out[String(status)] = {
      description: codes.map((c) => `\`${c}\`: ${PROBLEM_TYPES[c]}`).join("\n\n"),
      headers,
      content: {
        "application/problem+json": { schema: { allOf: [{ $ref: `${COMPONENT_PREFIX}Problem` }, narrowed] } },
      },
    };
  }
  return out;
}

function operationObject(op: Operation): Json {
  const body = requestBody(op);
  return {
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    ...(op.public ? { security: [] } : {}),
    parameters: parameters(op),
    ...(body ? { requestBody: body } : {}),
    responses: { [String(op.success.status)]: successResponse(op), ...problemResponses(op) },
  };
}

const ID_PARAMETER = {
  name: "id",
  in: "path",
  required: true,
  description: "A positive integer id (else 400).",
  schema: { type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
};

const IDEMPOTENCY_KEY = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  schema: { type: "string", pattern: "^[\\x21-\\x7e]{1,255}$" },
};

const DESCRIPTION = `The public contract of the invoicing service (API.md). Generated from the schemas that validate
requests and describe responses, so it cannot drift from the code.

- **JSON in, JSON out**, camelCase. A request with a body must send \`Content-Type: application/json\` (else 415);
  action endpoints (\`/finalize\`, \`/send\`, …) accept an empty body. Request bodies are strict: an unknown or
  read-only field is a 400 naming it.
- **Authentication**: \`Authorization: Bearer <API key>\` on everything except \`/health\`, \`/public/…\`,
  \`/openapi.json\`, \`/docs\` and the card processor's webhook. Each key belongs to one user, who sees only
  their own records; another user's id is a 404 like one that does not exist.
- **Money** is exact decimal: amounts are strings with two decimals (\`"1234.50"\`); \`quantity\`, \`unitPrice\`
  and \`taxRate\` inputs accept a string or a number, never rounded.
- **Timestamps** come back as ISO 8601 UTC with milliseconds; inputs accept RFC 3339 date-times or dates.
- **Every resource field is always present**, \`null\` when it has no value.
- **Lists** are bare JSON arrays, newest first, with \`limit\` (1–200, default 100) and \`offset\`; a full page has a
  \`Link: <…>; rel="next"\` header to follow.
- **Errors** are RFC 9457 problem details (\`application/problem+json\`) with a \`code\`; when several apply, the
  first of 401 → 404 unknown route → 405 → 413 → 415 → 400 → 404 unknown id → 412 → 409 → 422 wins. A known path
  with a method it does not serve is a 405 \`method_not_allowed\` with \`Allow\`. Each problem type is explained
  at [/docs#problem-types](/docs#problem-types).
- **Idempotency**: every authenticated POST accepts \`Idempotency-Key\`; a repeat within 24 h returns the first
  2xx response again with \`Idempotent-Replayed: true\` and does nothing.
- **Concurrency**: single resources carry an \`ETag\`; PATCH honours \`If-Match\` (412).`;

function components(): Json {
  return {
    schemas: componentSchemas(),
    securitySchemes: {
      bearer: {
        type: "http",
        scheme: "bearer",
        description: "An API key: `npm run keys -- create --user <id>`, or POST /api-keys.",
      },
    },
    parameters: {
      Id: ID_PARAMETER,
      PublicToken: {
        name: "publicToken",
        in: "path",
        required: true,
        description: "The document's `publicToken`.",
        schema: { type: "string" },
      },
      IfMatch: {
        name: "If-Match",
        in: "header",
        required: false,
        description: "The `ETag` the change is based on; a mismatch is a 412.",
        schema: { type: "string" },
      },
      IdempotencyKey: {
        ...IDEMPOTENCY_KEY,
        description:
          "1–255 visible ASCII characters (else 400), scoped to the user. A repeat with the same method, path and body within 24 h returns the first 2xx response again (with `Idempotent-Replayed: true`) and does nothing; an error response is not kept. Another method, path or body: 422 `idempotency_key_reused`; while the first runs: 409 `idempotency_key_in_use`.",
      },
    },
    headers: {
      "X-Request-Id": {
        description: "The request's id: the caller's own when 1–128 of `[A-Za-z0-9._-]`, else a generated one.",
        schema: { type: "string" },
      },
      Location: {
        description: "The URL of the created resource (or the redirect's target).",
        schema: { type: "string" },
      },
      ETag: { description: "The resource's version, for `If-Match`.", schema: { type: "string" } },
      Link: {
        description: 'With a full page: `<URL>; rel="next"`, the absolute URL of the next page.',
        schema: { type: "string" },
      },
      "Idempotent-Replayed": {
        description: "`true` on a replayed response.",
        schema: { type: "string", enum: ["true"] },
      },
      "WWW-Authenticate": { description: "`Bearer …`", schema: { type: "string" } },
      "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer", minimum: 0 } },
    },
  };
}

/** Builds the document from a list of operations (app/route-modules.ts allOperations: every one). */
export function buildOpenApiDocument(operations: readonly Operation[]): Json {
  const paths: Record<string, Json> = {};
  for (const op of operations) {
    const item = (paths[op.path] ??= {});
    if (item[op.method]) throw new Error(`duplicate operation ${op.method.toUpperCase()} ${op.path}`);
    item[op.method] = operationObject(op);
  }
  return {
    // No `jsonSchemaDialect`: it would only restate the default, and with it Prism 5 silently
    // skips validating bodies.
    openapi: "3.1.0",
    info: { title: "Invoicing API", version: "1.0.0", description: DESCRIPTION },
    servers: [{ url: "/", description: "This deployment" }],
    security: [{ bearer: [] }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: components(),
  };
}
