import type { Deps } from "../deps";
import { DomainError } from "../errors";
import { errorName, log } from "../observability/context-log";
import {
  emptyResult,
  type RecordKey,
  type WorkerOptions,
  type WorkerResult,
  type WorkMessage,
  type Worker,
} from "./port";

/**
 * A worker of a due job: each message's records, one after the other, through `handle`, which reads
 * the record, decides and writes conditionally, and says what came of it (an outcome counted in the
 * tally). `state` is one per batch (a job's per-run caches, e.g. the quotas found full).
 *
 * - At the deadline it takes no new record: those left are counted `deferred` and stay on the due
 *   list, so the next dispatch sends them again; nothing is given back to the queue for them.
 * - A DomainError of one record (a rule that refuses it) is counted `failed` and does not stop the
 *   others; it stays due. Any other error (the table unreachable) gives its message back to the
 *   queue (`retry`), and the queue's redrive policy takes it to the dead-letter queue after a few.
 */
export function dueWorker<S>(
  name: string,
  handle: (deps: Deps, key: RecordKey, message: WorkMessage, state: S) => Promise<string>,
  newState: () => S,
): Worker {
  return async (deps: Deps, messages: readonly WorkMessage[], options: WorkerOptions = {}): Promise<WorkerResult> => {
    const result = emptyResult();
    const count = (outcome: string) => (result.tally[outcome] = (result.tally[outcome] ?? 0) + 1);
    const state = newState();
    for (const message of messages) {
      try {
        for (const key of message.keys) {
          if (options.deadline !== undefined && Date.now() >= options.deadline) {
            count("deferred");
            continue;
          }
          try {
            count(await handle(deps, key, message, state));
          } catch (error) {
            if (!(error instanceof DomainError)) throw error;
            count("failed");
          }
        }
      } catch (error) {
        log("warn", `${name} worker: a message failed; it comes again`, { error: errorName(error) });
        result.retry.push(message);
      }
    }
    return result;
  };
}

/** The id in an entity's sort key (INVOICE#0000000012 → 12). */
export const idOf = (key: RecordKey): number => Number(key.sk.slice(key.sk.lastIndexOf("#") + 1));
export const userIdOf = (key: RecordKey): string => key.pk.slice("USER#".length);
