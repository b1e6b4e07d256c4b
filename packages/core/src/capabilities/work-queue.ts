import type { QueueName } from "./queue-names";

/** A message of the work queues (queue/port.ts): the records a worker is to handle. */
export interface RecordKey {
  pk: string;
  sk: string;
}

export interface WorkMessage {
  queue: QueueName;
  /** The time the work is done as of: the job's `now` (`npm run jobs -- --now`), or the change's. */
  now: string;
  /** Whose records: the unit that takes turns. */
  userId: string;
  /** The records, in the order they are to be handled (a webhook endpoint's attempts in stream order). */
  keys: RecordKey[];
  /** What a worker cannot read back from the table (a checkout session that ended). */
  data?: Record<string, unknown>;
}

/** Where deployed messages go (SQS, functions/src/capabilities/work-queue.ts); absent: in process. */
export interface WorkQueue {
  send(queue: QueueName, messages: readonly WorkMessage[]): Promise<void>;
  /**
   * About how many messages the queue still holds (waiting, being worked, delayed): above 0, the
   * workers are behind the earlier runs' sends (queue/dispatch.ts reads less then). Absent: 0.
   */
  backlog?(queue: QueueName): Promise<number>;
}
