/**
 * Keys this container saw verified a moment ago: a hint, never an authorization. Every request still
 * checks its key in the table (keys/authorized-db.ts); the hint only decides whether the request's
 * reads may be sent alongside that check, speculatively.
 *
 * - A key this container verified in the last minute is almost surely still good: its GET sends the
 *   key item and the record in one BatchGetItem (one round trip), and its rate-limit update rides
 *   along (limits/rate-limit.ts).
 * - Any other key — the first request of a key in a fresh container, and every forged key — gets
 *   its key item read ALONE first, and nothing else is read, resolved or parsed until it is known
 *   good. So a made-up key that names a real user costs the service one GetItem of a key item that
 *   does not exist: no Query of the user's data, no DNS lookup, no body parsing (docs/auth.md).
 *
 * A key revoked within the minute may still have reads sent speculatively; their results are dropped
 * and the answer is the 401, as for any refused key.
 */
const HINT_MS = 60_000;
const MAX_KEYS = 10_000;
const verifiedAt = new Map<string, number>();

/** Whether the key with this hash was verified in this container within the last minute. */
export function recentlyVerified(hash: string, nowMs = Date.now()): boolean {
  const at = verifiedAt.get(hash);
  return at !== undefined && nowMs - at < HINT_MS;
}

/** Notes that the key with this hash was just found good. */
export function noteVerified(hash: string, nowMs = Date.now()): void {
  verifiedAt.delete(hash);
  verifiedAt.set(hash, nowMs);
  if (verifiedAt.size > MAX_KEYS) verifiedAt.delete(verifiedAt.keys().next().value!);
}

/** Only for tests that need a fresh container's memory. */
export function forgetVerifiedKeys(): void {
  verifiedAt.clear();
}
