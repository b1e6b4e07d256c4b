import type { DomainErrorCode } from "@invoicing/core/errors";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** Every problem code: the domain's (core/errors.ts) and those HTTP adds. */
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

/** One problem type: its HTTP status, its `title`, and what its `type` URI documents. */
export interface ProblemType {
  status: ContentfulStatusCode;
  title: string;
  /** When the code is given, for the OpenAPI document and the /docs page (`type` is `/docs#problem-{code}`). */
  type: string;
}

/**
 * The one table of problem codes (RFC 9457): http/problems.ts answers with its status and title,
 * openapi/ documents each code from it. A Record over ProblemCode, so a new code does not compile
 * until it has a status, a title and its documentation here.
 */
export const PROBLEMS: Record<ProblemCode, ProblemType> = {
  malformed_json: {
    status: 400,
    title: "Malformed JSON",
    type: "The request body is not valid JSON.",
  },
  validation_error: {
    status: 400,
    title: "Validation failed",
    type: "Wrong type, missing required field, unknown or read-only field, unknown enum value, bad query parameter (`limit` > 200 included), bad path id or bad header (Idempotency-Key). `errors[]` names each offending field.",
  },
  invalid_signature: {
    status: 400,
    title: "Invalid signature",
    type: "A card processor webhook without a valid signature; nothing changes.",
  },
  unauthorized: {
    status: 401,
    title: "Unauthorized",
    type: "Missing, malformed, unknown or revoked API key. Comes with `WWW-Authenticate: Bearer`.",
  },
  insufficient_scope: {
    status: 403,
    title: "Insufficient scope",
    type: "A `read_only` API key used with any method but GET (or HEAD): it may only read. Nothing changes.",
  },
  not_found: {
    status: 404,
    title: "Not found",
    type: "Unknown route, unknown id, another user's id, or the public token of a draft.",
  },
  method_not_allowed: {
    status: 405,
    title: "Method not allowed",
    type: "A known path with a method it does not serve. The `Allow` header lists those it does.",
  },
  idempotency_key_in_use: {
    status: 409,
    title: "Idempotency key in use",
    type: "A request with the same Idempotency-Key is still running; retry shortly.",
  },
  precondition_failed: {
    status: 412,
    title: "Precondition failed",
    type: "`If-Match` does not match the resource's current `ETag`.",
  },
  payload_too_large: {
    status: 413,
    title: "Payload too large",
    type: "The request body is over 256 KiB.",
  },
  unsupported_media_type: {
    status: 415,
    title: "Unsupported media type",
    type: "A request body sent without a JSON content type.",
  },
  invoice_not_editable: {
    status: 422,
    title: "Invoice not editable",
    type: "PATCH or DELETE of an invoice that is not a draft.",
  },
  estimate_not_editable: {
    status: 422,
    title: "Estimate not editable",
    type: "PATCH of an estimate that is not draft or sent; DELETE of an accepted or converted one.",
  },
  schedule_not_editable: {
    status: 422,
    title: "Schedule not editable",
    type: "PATCH of a completed or cancelled schedule, or of `frequency`/`startDate`/`clientId` after its first invoice.",
  },
  invalid_transition: {
    status: 422,
    title: "Invalid transition",
    type: "A lifecycle action whose precondition does not hold (finalize a non-draft, void a void invoice, …).",
  },
  client_not_found: {
    status: 422,
    title: "Client not found",
    type: "The body's `clientId` is not one of the user's clients.",
  },
  client_in_use: {
    status: 422,
    title: "Client in use",
    type: "DELETE of a client that invoices, estimates or schedules reference.",
  },
  empty_invoice: {
    status: 422,
    title: "Empty invoice",
    type: "Finalize of an invoice without line items.",
  },
  negative_total: {
    status: 422,
    title: "Negative total",
    type: "Finalize of an invoice whose total is below zero.",
  },
  client_email_missing: {
    status: 422,
    title: "Client email missing",
    type: "Send (invoice or estimate) with no `to` and a client without email.",
  },
  already_converted: {
    status: 422,
    title: "Already converted",
    type: "Convert of an estimate that is already converted.",
  },
  tax_exemption_reason_required: {
    status: 422,
    title: "Tax exemption reason required",
    type: "Finalize (invoice) or send (estimate) with an `exempt`, `reverse_charge`, `intra_community`, `export` or `outside_scope` line and no `taxExemptionReason`.",
  },
  idempotency_key_reused: {
    status: 422,
    title: "Idempotency key reused",
    type: "The same Idempotency-Key with a different method, path or body.",
  },
  e_invoice_incomplete: {
    status: 422,
    title: "E-invoice incomplete",
    type: "An e-invoice asked for while data its format must carry is missing. `errors[]` names each missing field where the user sets it: `profile.<field>` (the seller, copied at finalize), `client.<field>` (the buyer, copied at finalize) or the invoice's own field (`buyerReference`, `lineItems`, …).",
  },
  webhook_url_not_allowed: {
    status: 422,
    title: "Webhook URL not allowed",
    type: "A webhook endpoint URL that is not https, or that resolves to a loopback, private, link-local or cloud metadata address.",
  },
  limit_exceeded: {
    status: 422,
    title: "Limit exceeded",
    type: "An 11th webhook endpoint: at most 10 per account.",
  },
  overpayment: {
    status: 422,
    title: "Overpayment",
    type: "A payment larger than the invoice's `amountDue` (also: one that lost the race to payments that filled it).",
  },
  payment_not_deletable: {
    status: 422,
    title: "Payment not deletable",
    type: "DELETE of a card processor payment: refund it instead.",
  },
  refund_not_possible: {
    status: 422,
    title: "Refund not possible",
    type: "Refund of a manual payment, of more than what is left to refund, with no card processor configured, or one the card processor refused.",
  },
  credit_exceeds_invoice: {
    status: 422,
    title: "Credit exceeds invoice",
    type: "A credit note that would credit more than what is left of the invoice's `total` (the totals of its credit notes never exceed it), or more of a line than is left of it.",
  },
  empty_credit_note: {
    status: 422,
    title: "Empty credit note",
    type: "A credit note with no line, or with a total ≤ 0.",
  },
  peppol_not_configured: {
    status: 422,
    title: "Peppol not configured",
    type: "A Peppol action while the operator has configured no access point provider (docs/peppol.md).",
  },
  peppol_not_registered: {
    status: 422,
    title: "Peppol not registered",
    type: "A Peppol send before the business's registration (`PUT /profile/peppol-registration`) is active.",
  },
  peppol_registration_in_progress: {
    status: 409,
    title: "Peppol registration in progress",
    type: "A `PUT` or `DELETE /profile/peppol-registration` while another one for the same business is still talking to the access point provider; nothing changes. Retry shortly (`Retry-After`).",
  },
  peppol_recipient_unreachable: {
    status: 422,
    title: "Peppol recipient unreachable",
    type: "A Peppol send to a buyer whose `peppolId` cannot receive the document on the network (the provider's lookup).",
  },
  email_quota_exceeded: {
    status: 429,
    title: "Email quota exceeded",
    type: "`send` (invoice or estimate) when the user's emails of the last 24 hours reached the daily quota (EMAIL_DAILY_QUOTA, default 200, or the user's own); nothing changes. Comes with `Retry-After` (seconds).",
  },
  rate_limited: {
    status: 429,
    title: "Too many requests",
    type: "The user's requests (API_RATE_LIMIT per second, default 50, bursts of twice that, every authenticated route together; or the user's own limit) or the public link's (PUBLIC_RATE_LIMIT, default 10) are past the limit; nothing was done. Comes with `Retry-After` (whole seconds, at least 1).",
  },
  service_unavailable: {
    status: 503,
    title: "Service unavailable",
    type: "The database keeps throttling, fails or is unreachable. Comes with `Retry-After` (seconds).",
  },
  internal_error: {
    status: 500,
    title: "Internal error",
    type: "Anything unexpected; logged with the request id given in `detail` and `X-Request-Id`.",
  },
};

export const PROBLEM_CODES = Object.keys(PROBLEMS) as [ProblemCode, ...ProblemCode[]];

export const problemStatus = (code: ProblemCode): ContentfulStatusCode => PROBLEMS[code].status;
