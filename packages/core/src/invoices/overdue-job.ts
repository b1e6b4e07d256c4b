import type { Deps } from "../deps";
import { transition } from "../db/transition";
import { DomainError } from "../errors";
import type { JobOptions, JobResult } from "../job";
import { dispatchDue, dispatchFields } from "../queue/dispatch";
import { dueWorker, idOf, userIdOf } from "../queue/due-worker";

/**
 * The `overdue` job: a sent invoice whose dueDate is earlier than `now` becomes overdue. The run
 * dispatches the byDue list of sent invoices to the `overdue` queue (queue/dispatch.ts); the worker
 * below makes each transition, conditional on `sent`, so a second or concurrent run, or a message
 * given twice, changes nothing (the invoice has already left the list or fails the condition).
 */
export const overdueWorker = dueWorker(
  "overdue",
  async (deps, key, message) => {
    const now = message.now;
    try {
      await transition(
        { ...deps, userId: userIdOf(key) },
        {
          kind: "INVOICE",
          id: idOf(key),
          from: ["sent"],
          to: "overdue",
          set: { updatedAt: now },
          notFound: () => new DomainError("not_found", "gone"),
          invalid: () => new DomainError("invalid_transition", "no longer sent"),
        },
      );
      return "changed";
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return "skipped"; // paid, voided or already made overdue by a concurrent run
    }
  },
  () => undefined,
);

export async function runOverdueJob(deps: Deps, now: Date, options: JobOptions = {}): Promise<JobResult> {
  const nowIso = now.toISOString();
  const run = await dispatchDue(deps, {
    job: "overdue",
    queue: "overdue",
    now: nowIso,
    worker: overdueWorker,
    deadline: options.deadline,
  });
  const { changed = 0, skipped = 0 } = run.tally;
  return { job: "overdue", now: nowIso, changed, skipped, ...dispatchFields(deps, run) };
}
