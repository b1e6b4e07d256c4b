import type { Deps } from "../deps";
import { transition } from "../db/transition";
import { DomainError } from "../errors";
import type { JobOptions, JobResult } from "../job";
import { dispatchDue, dispatchFields } from "../queue/dispatch";
import { dueWorker, idOf, userIdOf } from "../queue/due-worker";

/**
 * The `expire-estimates` job: a sent estimate whose validUntil is earlier than `now` becomes
 * expired. The run dispatches the byDue list of sent estimates with a validUntil (db/keys.ts
 * DUE_LISTS) to the `expire-estimates` queue; the worker's write is conditioned on the record
 * itself — still sent, validUntil still before now — not on the index entry, which may lag a PATCH
 * that moved validUntil; so a second or concurrent run, a message given twice, or a stale entry,
 * changes nothing.
 */
export const expireEstimatesWorker = dueWorker(
  "expire-estimates",
  async (deps, key, message) => {
    try {
      await transition(
        { ...deps, userId: userIdOf(key) },
        {
          kind: "ESTIMATE",
          id: idOf(key),
          from: ["sent"],
          to: "expired",
          before: { attr: "validUntil", at: message.now },
          set: { updatedAt: message.now },
          notFound: () => new DomainError("not_found", "gone"),
          invalid: () => new DomainError("invalid_transition", "no longer a sent estimate past its validUntil"),
        },
      );
      return "changed";
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return "skipped"; // answered, converted, deleted, given a later validUntil, or expired by a concurrent run
    }
  },
  () => undefined,
);

export async function runExpireEstimatesJob(deps: Deps, now: Date, options: JobOptions = {}): Promise<JobResult> {
  const nowIso = now.toISOString();
  const run = await dispatchDue(deps, {
    job: "expire-estimates",
    queue: "expire-estimates",
    now: nowIso,
    worker: expireEstimatesWorker,
    deadline: options.deadline,
  });
  const { changed = 0, skipped = 0 } = run.tally;
  return { job: "expire-estimates", now: nowIso, changed, skipped, ...dispatchFields(deps, run) };
}
