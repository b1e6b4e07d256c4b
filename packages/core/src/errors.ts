/**
 * Domain errors: what went wrong in business terms. The HTTP layer maps each code to a status and
 * problem+json body in one place (functions/src/http/problems.ts); core never speaks HTTP.
 */
export type DomainErrorCode =
  | "not_found"
  | "invoice_not_editable"
  | "estimate_not_editable"
  | "schedule_not_editable"
  | "invalid_transition"
  | "client_not_found"
  | "client_in_use"
  | "empty_invoice"
  | "negative_total"
  | "client_email_missing"
  | "already_converted"
  | "precondition_failed"
  | "idempotency_key_in_use"
  | "idempotency_key_reused"
  | "service_unavailable"
  | "invalid_signature"
  | "tax_exemption_reason_required"
  | "webhook_url_not_allowed"
  | "limit_exceeded"
  | "overpayment"
  | "payment_not_deletable"
  | "refund_not_possible"
  | "email_quota_exceeded"
  | "rate_limited"
  | "credit_exceeds_invoice"
  | "empty_credit_note"
  | "insufficient_scope"
  | "peppol_not_configured"
  | "peppol_not_registered"
  | "peppol_registration_in_progress"
  | "peppol_recipient_unreachable";

export class DomainError extends Error {
  constructor(
    readonly code: DomainErrorCode,
    readonly detail: string,
    /** When to try again (seconds), for refusals that lift with time (a quota); sent as Retry-After. */
    readonly retryAfterSeconds?: number,
  ) {
    super(detail);
    this.name = "DomainError";
  }
}

export interface FieldError {
  path: string;
  message: string;
}

/** Input that passed the schema but breaks a rule only core can check (e.g. a future paidAt). */
export class ValidationError extends Error {
  constructor(readonly errors: FieldError[]) {
    super(errors.map((e) => `${e.path || "body"}: ${e.message}`).join("; "));
    this.name = "ValidationError";
  }
}

export const notFound = (what: string, id?: number | string): DomainError =>
  new DomainError("not_found", id === undefined ? `${what} not found` : `${what} ${id} not found`);

export const invalidTransition = (what: string, from: string, action: string): DomainError =>
  new DomainError("invalid_transition", `cannot ${action} a ${from} ${what}`);
