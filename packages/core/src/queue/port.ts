/**
 * The work queue port (docs/operations.md, "Queues"): how a scheduled dispatcher and the stream
 * subscriber hand work to workers. Deployed it is SQS, one queue per kind of work with its own
 * dead-letter queue and Lambda worker (infra/queues.ts, functions/src/lambda/workers/); locally
 * (npm start, npm run jobs, the tests) the same messages are served in process (./in-process.ts).
 *
 * A message names records, never carries them: the worker reads each record again (a consistent
 * read) and acts only on what is still to do, with the record's own conditional writes. So a
 * message delivered twice, late, or after its record changed does nothing wrong, and the queue
 * holds no personal data.
 */
import type { Deps } from "../deps";

export {
  BATCH_SIZE,
  QUEUE_NAMES,
  QUEUE_RESOURCES,
  WORKER_CONCURRENCY,
  type QueueName,
} from "../capabilities/queue-names";
import type { WorkMessage } from "../capabilities/work-queue";
export type { RecordKey, WorkMessage, WorkQueue } from "../capabilities/work-queue";

/** What a worker did with a batch: counts by outcome, and the messages to be given again. */
export interface WorkerResult {
  tally: Record<string, number>;
  /** Messages whose handling failed and must come again (SQS: the partial batch response). */
  retry: WorkMessage[];
}

export interface WorkerOptions {
  /** Epoch ms (wall clock): take no new record after it; what is left stays due for the next run. */
  deadline?: number;
}

export type Worker = (deps: Deps, messages: readonly WorkMessage[], options?: WorkerOptions) => Promise<WorkerResult>;

export const emptyResult = (): WorkerResult => ({ tally: {}, retry: [] });

export function addTally(into: Record<string, number>, from: Record<string, number>): void {
  for (const [key, value] of Object.entries(from)) into[key] = (into[key] ?? 0) + value;
}
