import type { Deps } from "../context";
import { dueItems } from "../db/due";
import { transition } from "../db/transition";
import { DomainError } from "../errors";
import type { JobResult } from "../job";

/**
 * The `expire-estimates` job: a sent estimate whose validUntil is earlier than `now` becomes
 * expired. It reads only the byDue list of sent estimates with a validUntil (db/keys.ts DUE_LISTS).
 * The write is conditioned on the record itself — still sent, validUntil still before now — not on
 * the index entry, which may lag a PATCH that moved validUntil; so a second or concurrent run, or a
 * stale entry, changes nothing.
 */
export async function runExpireEstimatesJob(deps: Deps, now: Date): Promise<JobResult> {
  const nowIso = now.toISOString();
  let changed = 0;
  let skipped = 0;
  for await (const due of dueItems(deps.db, "expire-estimates", nowIso, { inclusive: false })) {
    const userId = due.userId as string;
    try {
      await transition(
        { ...deps, userId },
        {
          kind: "ESTIMATE",
          id: due.id as number,
          from: ["sent"],
          to: "expired",
          before: { attr: "validUntil", at: nowIso },
          set: { updatedAt: nowIso },
          notFound: () => new DomainError("not_found", "gone"),
          invalid: () => new DomainError("invalid_transition", "no longer a sent estimate past its validUntil"),
        },
      );
      changed++;
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      skipped++; // answered, converted, deleted, given a later validUntil, or expired by a concurrent run
    }
  }
  return { job: "expire-estimates", now: nowIso, changed, skipped };
}
