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
 * A transaction cancelled only because another one held an item it touches (commit() already
 * retried it): for a use case that can settle the race by reading again (e.g. estimate convert).
 */
export function isTransactionConflict(error: unknown): boolean {
  if (!(error instanceof Error) || error.name !== "TransactionCanceledException") return false;
  const reasons = (error as Error & { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return reasons.some((reason) => reason.Code === "TransactionConflict");
}
