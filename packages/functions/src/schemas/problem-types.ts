import type { DomainErrorCode } from "@invoicing/core/errors";

/** Every problem code: the domain's (core/errors.ts) and those HTTP adds (status and title of each: http/problems.ts). */
export type ProblemCode =
  | DomainErrorCode
  | "malformed_json"
  | "validation_error"
  | "unauthorized"
  | "method_not_allowed"
  | "payload_too_large"
  | "unsupported_media_type"
  | "e_invoice_incomplete"
  | "internal_error";

/**
 * What each problem code means, for the OpenAPI document and the /docs page,
 * where `type` URIs point (`/docs#problem-{code}`). A Record over ProblemCode, so a new code does
 * not compile until it is documented here.
 */
export const PROBLEM_TYPES: Record<ProblemCode, string> = {
  malformed_json: "The request body is not valid JSON.",
  validation_error:
    "Wrong type, missing required field, unknown or read-only field, unknown enum value, bad query parameter (`limit` > 200 included), bad path id or bad header (Idempotency-Key). `errors[]` names each offending field.",
  invalid_signature: "A card processor webhook without a valid signature; nothing changes.",
  unauthorized: "Missing, malformed, unknown or revoked API key. Comes with `WWW-Authenticate: Bearer`.",
  insufficient_scope:
    "A `read_only` API key used with any method but GET (or HEAD): it may only read. Nothing changes.",
  not_found: "Unknown route, unknown id, another user's id, or the public token of a draft.",
  method_not_allowed: "A known path with a method it does not serve. The `Allow` header lists those it does.",
  idempotency_key_in_use: "A request with the same Idempotency-Key is still running; retry shortly.",
  precondition_failed: "`If-Match` does not match the resource's current `ETag`.",
  payload_too_large: "The request body is over 256 KiB.",
  unsupported_media_type: "A request body sent without a JSON content type.",
  invoice_not_editable: "PATCH or DELETE of an invoice that is not a draft.",
  estimate_not_editable: "PATCH of an estimate that is not draft or sent; DELETE of an accepted or converted one.",
  schedule_not_editable:
    "PATCH of a completed or cancelled schedule, or of `frequency`/`startDate`/`clientId` after its first invoice.",
  invalid_transition:
    "A lifecycle action whose precondition does not hold (finalize a non-draft, void a void invoice, …).",
  client_not_found: "The body's `clientId` is not one of the user's clients.",
  client_in_use: "DELETE of a client that invoices, estimates or schedules reference.",
  empty_invoice: "Finalize of an invoice without line items.",
  negative_total: "Finalize of an invoice whose total is below zero.",
  client_email_missing: "Send (invoice or estimate) with no `to` and a client without email.",
  already_converted: "Convert of an estimate that is already converted.",
  tax_exemption_reason_required:
    "Finalize (invoice) or send (estimate) with an `exempt`, `reverse_charge`, `intra_community`, `export` or `outside_scope` line and no `taxExemptionReason`.",
  idempotency_key_reused: "The same Idempotency-Key with a different method, path or body.",
  e_invoice_incomplete:
    "An e-invoice asked for while data its format must carry is missing. `errors[]` names each missing field where the user sets it: `profile.<field>` (the seller, copied at finalize), `client.<field>` (the buyer, copied at finalize) or the invoice's own field (`buyerReference`, `lineItems`, …).",
  webhook_url_not_allowed:
    "A webhook endpoint URL that is not https, or that resolves to a loopback, private, link-local or cloud metadata address.",
  limit_exceeded: "An 11th webhook endpoint: at most 10 per account.",
  overpayment:
    "A payment larger than the invoice's `amountDue` (also: one that lost the race to payments that filled it).",
  payment_not_deletable: "DELETE of a card processor payment: refund it instead.",
  refund_not_possible:
    "Refund of a manual payment, of more than what is left to refund, with no card processor configured, or one the card processor refused.",
  credit_exceeds_invoice:
    "A credit note that would credit more than what is left of the invoice's `total` (the totals of its credit notes never exceed it), or more of a line than is left of it.",
  empty_credit_note: "A credit note with no line, or with a total ≤ 0.",
  email_quota_exceeded:
    "`send` (invoice or estimate) when the user's emails of the last 24 hours reached the daily quota (EMAIL_DAILY_QUOTA, default 200); nothing changes. Comes with `Retry-After` (seconds).",
  rate_limited:
    "The user's requests (API_RATE_LIMIT per second, default 50, bursts of twice that, every authenticated route together; or the user's own limit) or the public link's (PUBLIC_RATE_LIMIT, default 10) are past the limit; nothing was done. Comes with `Retry-After` (whole seconds, at least 1).",
  service_unavailable: "The database keeps throttling, fails or is unreachable. Comes with `Retry-After` (seconds).",
  internal_error: "Anything unexpected; logged with the request id given in `detail` and `X-Request-Id`.",
};

export const PROBLEM_CODES = Object.keys(PROBLEM_TYPES) as [ProblemCode, ...ProblemCode[]];
