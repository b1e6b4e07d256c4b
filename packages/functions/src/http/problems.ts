import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { DomainError, ValidationError, type FieldError } from "@invoicing/core/errors";
import type { ProblemCode } from "../schemas/problem-types";
import { log as logLine } from "@invoicing/core/observability/context-log";
import { isUnavailable } from "@invoicing/core/db/errors";
import { KeyRefused } from "@invoicing/core/keys/authorized-db";

export type { ProblemCode };

/**
 * RFC 9457 problem details: the one place where errors become HTTP responses.
 */
const PROBLEMS: Record<ProblemCode, { status: ContentfulStatusCode; title: string }> = {
  malformed_json: { status: 400, title: "Malformed JSON" },
  validation_error: { status: 400, title: "Validation failed" },
  invalid_signature: { status: 400, title: "Invalid signature" },
  unauthorized: { status: 401, title: "Unauthorized" },
  insufficient_scope: { status: 403, title: "Insufficient scope" },
  not_found: { status: 404, title: "Not found" },
  method_not_allowed: { status: 405, title: "Method not allowed" },
  idempotency_key_in_use: { status: 409, title: "Idempotency key in use" },
  precondition_failed: { status: 412, title: "Precondition failed" },
  payload_too_large: { status: 413, title: "Payload too large" },
  unsupported_media_type: { status: 415, title: "Unsupported media type" },
  invoice_not_editable: { status: 422, title: "Invoice not editable" },
  estimate_not_editable: { status: 422, title: "Estimate not editable" },
  schedule_not_editable: { status: 422, title: "Schedule not editable" },
  invalid_transition: { status: 422, title: "Invalid transition" },
  client_not_found: { status: 422, title: "Client not found" },
  client_in_use: { status: 422, title: "Client in use" },
  empty_invoice: { status: 422, title: "Empty invoice" },
  negative_total: { status: 422, title: "Negative total" },
  client_email_missing: { status: 422, title: "Client email missing" },
  already_converted: { status: 422, title: "Already converted" },
  idempotency_key_reused: { status: 422, title: "Idempotency key reused" },
  e_invoice_incomplete: { status: 422, title: "E-invoice incomplete" },
  tax_exemption_reason_required: { status: 422, title: "Tax exemption reason required" },
  webhook_url_not_allowed: { status: 422, title: "Webhook URL not allowed" },
  limit_exceeded: { status: 422, title: "Limit exceeded" },
  overpayment: { status: 422, title: "Overpayment" },
  payment_not_deletable: { status: 422, title: "Payment not deletable" },
  refund_not_possible: { status: 422, title: "Refund not possible" },
  credit_exceeds_invoice: { status: 422, title: "Credit exceeds invoice" },
  empty_credit_note: { status: 422, title: "Empty credit note" },
  email_quota_exceeded: { status: 429, title: "Email quota exceeded" },
  rate_limited: { status: 429, title: "Too many requests" },
  service_unavailable: { status: 503, title: "Service unavailable" },
  internal_error: { status: 500, title: "Internal error" },
};

export const problemStatus = (code: ProblemCode): ContentfulStatusCode => PROBLEMS[code].status;

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
  const e =
    error instanceof Error
      ? { name: error.name, message: error.message, stack: error.stack }
      : { value: String(error) };
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
