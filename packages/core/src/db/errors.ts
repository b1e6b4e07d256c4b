/** Classifies AWS SDK errors: what means "DynamoDB is unavailable right now" (→ 503). */
const UNAVAILABLE = new Set([
  "ProvisionedThroughputExceededException",
  "ThrottlingException",
  "RequestLimitExceeded",
  "InternalServerError",
  "ServiceUnavailable",
  "ServiceUnavailableException",
  "TimeoutError",
  "RequestTimeout",
  "RequestTimeoutException",
  "TransactionInProgressException",
  // The invocation's deadline stopped the call (db/deadline.ts): as unavailable as a timeout.
  "AbortError",
]);
const NETWORK = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN"]);

export function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const e = error as Error & { code?: string; $metadata?: { httpStatusCode?: number }; $fault?: string };
  if (UNAVAILABLE.has(e.name) || (e.code && NETWORK.has(e.code))) return true;
  if (e.name === "TransactionCanceledException" && /TransactionConflict|ThrottlingError/.test(e.message)) return true;
  return e.$fault === "server" || (e.$metadata?.httpStatusCode ?? 0) >= 500;
}

/**
 * A transaction cancelled before anything applied, only because another transaction held one of
 * its items or one item was throttled: trying again may succeed. Inside an optimistic() round it is
 * a lost race (read again, decide again); elsewhere commit() sends it again itself (db/commit.ts).
 */
export function isTransientCancellation(error: unknown): boolean {
  if (!(error instanceof Error) || error.name !== "TransactionCanceledException") return false;
  const reasons = (error as Error & { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return (
    reasons.some((r) => r.Code === "TransactionConflict" || r.Code === "ThrottlingError") &&
    !reasons.some((r) => r.Code === "ConditionalCheckFailed")
  );
}
