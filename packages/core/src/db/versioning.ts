import { DomainError } from "../errors";

/**
 * Optimistic concurrency: every mutable record has a `version` that each write increments and
 * conditions on. The version is also the record's ETag.
 */
export const etagOf = (version: number): string => `"${version}"`;

/** If-Match: "*" or a list of strong ETags; weak ETags never match (RFC 9110 strong comparison). */
export function assertIfMatch(ifMatch: string | undefined, version: number): void {
  if (ifMatch === undefined) return;
  const wanted = ifMatch.split(",").map((t) => t.trim());
  if (wanted.includes("*") || wanted.includes(etagOf(version))) return;
  throw new DomainError("precondition_failed", "If-Match does not match the current ETag");
}
