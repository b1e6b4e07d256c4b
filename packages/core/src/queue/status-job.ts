import type { Deps } from "../deps";
import type { DueJob, ListedKind } from "../db/keys";
import { transition } from "../db/transition";
import { DomainError } from "../errors";
import type { JobName, JobOptions, JobResult } from "../job";
import { dispatchDue, dispatchFields } from "./dispatch";
import { dueWorker, idOf, userIdOf } from "./due-worker";
import type { QueueName, Worker } from "./port";

/**
 * A due job whose whole work is one status change per due record (the overdue invoices, the expired
 * estimates). Its run dispatches the job's due list to the job's queue (./dispatch.ts, users in
 * turns); its worker moves each record from `from` to `to` with one conditional write
 * (db/transition.ts), conditioned on the record itself — still in `from`, and with `before` that
 * attribute of it still earlier than the run's `now` — not on the due-list entry, which may lag a
 * change. So a second or concurrent run, a message given twice or a stale entry changes nothing: the
 * record is counted `skipped`.
 */
export interface StatusChange {
  job: DueJob & QueueName & JobName;
  kind: ListedKind;
  from: string;
  to: string;
  /** The attribute of the record that must still be before the run's `now` (an estimate's validUntil). */
  before?: string;
}

export function statusChangeJob(spec: StatusChange): {
  worker: Worker;
  run: (deps: Deps, now: Date, options?: JobOptions) => Promise<JobResult>;
} {
  const worker = dueWorker(
    spec.job,
    async (deps, key, message) => {
      try {
        await transition(
          { ...deps, userId: userIdOf(key) },
          {
            kind: spec.kind,
            id: idOf(key),
            from: [spec.from],
            to: spec.to,
            ...(spec.before ? { before: { attr: spec.before, at: message.now } } : {}),
            set: { updatedAt: message.now },
            notFound: () => new DomainError("not_found", "gone"),
            invalid: () => new DomainError("invalid_transition", `no longer ${spec.from}, due to become ${spec.to}`),
          },
        );
        return "changed";
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        return "skipped"; // moved on meanwhile (paid, answered, deleted, …) or changed by a concurrent run
      }
    },
    () => undefined,
  );
  const run = async (deps: Deps, now: Date, options: JobOptions = {}): Promise<JobResult> => {
    const nowIso = now.toISOString();
    const dispatched = await dispatchDue(deps, {
      job: spec.job,
      queue: spec.job,
      now: nowIso,
      worker,
      deadline: options.deadline,
    });
    const { changed = 0, skipped = 0 } = dispatched.tally;
    return { job: spec.job, now: nowIso, changed, skipped, ...dispatchFields(deps, dispatched) };
  };
  return { worker, run };
}
