import type { Context } from "hono";
import { DomainError, ValidationError, type FieldError } from "@invoicing/core/errors";
import { PROBLEMS, problemStatus, type ProblemCode } from "../schemas/problem-types";
import { errorFields, log as logLine } from "@invoicing/core/observability/context-log";
import { isUnavailable } from "@invoicing/core/db/errors";
import { KeyRefused } from "@invoicing/core/keys/authorized-db";

export type { ProblemCode };
export { problemStatus };

// RFC 9457 problem details: the one place where errors become HTTP responses. Each code's status,
// title and documentation are one table, PROBLEMS in schemas/problem-types.ts.

/** An error the HTTP layer raises itself (415, 413, 401 …), thrown and rendered like domain errors. */
export class HttpProblem extends Error {
  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
    readonly errors?: FieldError[],
  ) {
    super(detail);
    this.name = "HttpProblem";
  }
}

/**
 * `errors[]` holds the first MAX_FIELD_ERRORS found, each message cut to MAX_MESSAGE_CHARS (a
 * message may quote the value it refuses): the answer to a bad request stays small whatever the
 * request held — 85,000 bad line items once made a 10 MB problem document, over Lambda's 6 MB.
 */
const MAX_FIELD_ERRORS = 50;
const MAX_MESSAGE_CHARS = 200;
const MAX_DETAIL_CHARS = 1000;

const capErrors = (errors: readonly FieldError[]): FieldError[] =>
  errors
    .slice(0, MAX_FIELD_ERRORS)
    .map((e) => ({ path: e.path.slice(0, MAX_MESSAGE_CHARS), message: e.message.slice(0, MAX_MESSAGE_CHARS) }));

export function validationProblem(errors: readonly FieldError[]): HttpProblem {
  const kept = capErrors(errors);
  const detail = kept
    .map((e) => `${e.path || "body"}: ${e.message}`)
    .join("; ")
    .slice(0, MAX_DETAIL_CHARS);
  return new HttpProblem("validation_error", detail, {}, kept);
}

export function problemResponse(
  c: Context,
  code: ProblemCode,
  detail: string,
  headers: Record<string, string> = {},
  errors?: FieldError[],
): Response {
  const { status, title } = PROBLEMS[code];
  const body: Record<string, unknown> = {
    type: `${new URL(c.req.url).origin}/docs#problem-${code}`,
    title,
    status,
    detail,
    code,
  };
  // Problems about fields name each one (an e-invoice's missing data as much as a bad body).
  if (code === "validation_error" || code === "e_invoice_incomplete") body.errors = capErrors(errors ?? []);
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/problem+json", ...headers },
  });
}

/** Maps anything thrown to its problem response; unexpected errors are logged, never shown. */
export function errorToResponse(c: Context, error: unknown): Response {
  if (error instanceof HttpProblem) return problemResponse(c, error.code, error.detail, error.headers, error.errors);
  // A read the API key did not allow (keys/authorized-db.ts): the request's 401, nothing to log.
  if (error instanceof KeyRefused) {
    return problemResponse(c, "unauthorized", error.message, { "WWW-Authenticate": 'Bearer realm="invoicing"' });
  }
  if (error instanceof ValidationError) {
    return problemResponse(c, "validation_error", error.message.slice(0, MAX_DETAIL_CHARS), {}, error.errors);
  }
  if (error instanceof DomainError) {
    const retryAfter = error.retryAfterSeconds ?? (error.code === "service_unavailable" ? 1 : undefined);
    const headers: Record<string, string> = retryAfter === undefined ? {} : { "Retry-After": String(retryAfter) };
    return problemResponse(c, error.code, error.detail, headers);
  }
  if (isUnavailable(error)) {
    log(c, "warn", "database unavailable", error);
    return problemResponse(c, "service_unavailable", "the database is unavailable; retry shortly", {
      "Retry-After": "1",
    });
  }
  log(c, "error", "unhandled error", error);
  return problemResponse(
    c,
    "internal_error",
    `an unexpected error occurred; request id ${c.get("requestId") ?? "unknown"}`,
  );
}

/** One JSON log line with the request and user ids; never the request body, headers or query string. */
export function log(c: Context, level: "warn" | "error", message: string, error: unknown): void {
  // Name, message and stack, with addresses, keys and tokens redacted (core's errorFields).
  const { error: name, errorMessage, stack } = errorFields(error);
  const e = { name, message: errorMessage, stack };
  // The request's log context adds the request id and, once the key named it, the user id.
  logLine(level, message, {
    requestId: c.get("requestId"),
    method: c.req.method,
    path: loggedPath(c.req.path),
    error: e,
  });
}

/**
 * The path as logged. A public page's token is a credential (whoever has it sees the invoice), so
 * it is cut out: /public/invoices/{token}/pdf (found by test/reliability/security.test.ts).
 */
const loggedPath = (path: string): string => path.replace(/^\/public\/([^/]+)\/[^/]+/, "/public/$1/{token}");
