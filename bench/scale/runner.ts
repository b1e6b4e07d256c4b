import type { Deps } from "@invoicing/core/deps";
import { jobs } from "@invoicing/core/jobs/all";
import { createStreamReader } from "@invoicing/local/stream-reader";
import { handleStreamBatch, type StreamRecord } from "@invoicing/core/stream/subscriber";
import { outboxWorker } from "@invoicing/core/email/outbox";
import { expireEstimatesWorker } from "@invoicing/core/estimates/expire-job";
import { overdueWorker } from "@invoicing/core/invoices/overdue-job";
import { remindersWorker } from "@invoicing/core/invoices/reminders-job";
import { checkoutExpiryWorker } from "@invoicing/core/public/checkout";
import { peppolWorker } from "@invoicing/core/peppol/delivery";
import type { QueueName, Worker } from "@invoicing/core/queue/port";
import { recurringWorker } from "@invoicing/core/schedules/recurring-job";
import { webhooksWorker } from "@invoicing/core/webhooks/webhooks-job";
import { SimulatedSqs } from "./simulated-sqs";

/**
 * The job runner as the simulation drives it: everything due at `now` (recurring occurrences,
 * reminders, the emails both queue) worked through by `workers` workers, until what is left cannot
 * run now (it waits for a quota or a later time). The one parameter that changes between the runs
 * of a figure is `workers`: the concurrency the deployed runner would be given. `tables` holds the
 * dependencies of each table the population is spread over (one per emulator instance): the jobs
 * run on each, the workers are shared.
 */
export interface JobRunner {
  /** What the figures are "of": printed beside them. */
  describe: string;
  /**
   * `during`, when given, runs beside the drain from the moment the first round's work is queued
   * (with the tables' dependencies as the runner gives them to the jobs); the drain waits for it.
   */
  drain(
    tables: readonly Deps[],
    now: Date,
    workers: number,
    during?: (tables: readonly Deps[]) => Promise<void>,
  ): Promise<Drained>;
}

export interface Drained {
  rounds: number;
  changed: number;
  /** Job runs that failed (e.g. the SDK gave up on a throttled partition): the next round runs again. */
  failedRuns: number;
  /** performance.now() when the last round that changed something ended: the drain's end. */
  doneAt: number;
  /** What the workers did, by outcome (sent, skipped, waitingForQuota, …), where the runner says. */
  outcomes?: Record<string, number>;
}

/**
 * The runner as main has it: each job is one serial loop over its due list (jobs/all.ts). Given N
 * workers it can only run N copies of the loops side by side (N overlapping invocations of the
 * scheduled functions), which the jobs allow (each change is a conditional write) but do not divide
 * between them: each copy reads the whole list and the copies race for the same items.
 */
export const serialJobs: JobRunner = {
  describe: "serial jobs: N overlapping runs of recurring then reminders (its outbox sweep)",
  async drain(tables, now, workers) {
    let rounds = 0;
    let changed = 0;
    let doneAt = performance.now();
    let failedRuns = 0;
    // A run that throws (an infrastructure error fails the run, jobs/registry.ts) changed what it
    // committed before; like a failed Lambda invocation, the next scheduled run takes up the rest.
    const attempt = async (run: () => Promise<{ changed: number; emailsDelivered?: unknown }>) => {
      try {
        const result = await run();
        return result.changed + Number(result.emailsDelivered ?? 0);
      } catch {
        failedRuns++;
        return 1; // not drained: run again
      }
    };
    for (;;) {
      rounds++;
      const results = await Promise.all(
        tables.flatMap((deps) =>
          Array.from(
            { length: workers },
            async () =>
              (await attempt(() => jobs.recurring(deps, now))) + (await attempt(() => jobs.reminders(deps, now))),
          ),
        ),
      );
      const round = results.reduce((a, b) => a + b, 0);
      changed += round;
      if (round > 0) doneAt = performance.now();
      // A round that changed nothing found only what cannot run now: drained.
      if (round === 0 || rounds >= 8) return { rounds, changed, failedRuns, doneAt };
    }
  },
};

/**
 * What runs beside the API while the lag is measured: the stream subscriber (and, once the work fans
 * out, the workers it hands work to). `start` returns its stop().
 */
export interface Background {
  describe: string;
  start(deps: Deps, endpoint: string, tableName: string): Promise<() => Promise<void>>;
}

/**
 * The local stream reader (polling every 100 ms) feeding the stream subscriber
 * (core/src/stream/subscriber.ts), which hands emails, webhook first attempts and checkout expiries
 * to the work queues (in process: their workers at the deployed concurrency, capabilities/queue-names.ts).
 *
 * Each batch read is handled as Lambda's event source mapping handles a shard's batch with
 * `ParallelizationFactor` (infra/stream.ts: 10): the records split by their partition key's hash
 * into that many groups, handled at once, each group in stream order. So one user's records stay in
 * order and another user's do not wait behind them, as deployed; the local reader alone (npm start)
 * handles a batch in one sequence, which no deployed shard does.
 */
export const PARALLELIZATION_FACTOR = 10;

export const streamSubscriber: Background = {
  describe: `the stream subscriber (core/src/stream/subscriber.ts), fed by the local stream reader every 100 ms, each batch split by partition key into ${PARALLELIZATION_FACTOR} concurrent groups (ParallelizationFactor)`,
  async start(deps, endpoint, tableName) {
    const handle = async (records: StreamRecord[]) => {
      const groups = new Map<number, StreamRecord[]>();
      for (const record of records) {
        const group = hashOf(String(record.dynamodb?.Keys?.pk?.S ?? "")) % PARALLELIZATION_FACTOR;
        groups.set(group, [...(groups.get(group) ?? []), record]);
      }
      const outcomes = await Promise.all([...groups.values()].map((group) => handleStreamBatch(deps, group)));
      // The reader moves past what every group finished: from the earliest record a group failed on,
      // the batch comes again (what the other groups did after it is found done: the handler is idempotent).
      const failed = outcomes
        .map((o) => o.failedSequenceNumber)
        .filter((n): n is string => n !== undefined)
        .map((n) => records.findIndex((r) => r.dynamodb?.SequenceNumber === n))
        .sort((a, b) => a - b)[0];
      return { failedSequenceNumber: failed === undefined ? undefined : records[failed]!.dynamodb?.SequenceNumber };
    };
    const reader = createStreamReader(deps, { endpoint, tableName, handle });
    const stop = reader.start(100);
    return async () => {
      await stop();
      reader.close();
    };
  },
};

/** A string's 32-bit FNV-1a hash: any stable hash spreads users over the groups. */
function hashOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/** Every queue's worker, as the deployed workers (functions/src/lambda/workers) run them. */
const WORKERS: Record<QueueName, Worker> = {
  overdue: overdueWorker,
  recurring: recurringWorker,
  reminders: remindersWorker,
  "expire-estimates": expireEstimatesWorker,
  outbox: outboxWorker,
  webhooks: webhooksWorker,
  "checkout-expiry": checkoutExpiryWorker,
  peppol: peppolWorker,
};

/**
 * The runner as the work-queue port has it (queue/dispatch.ts): the recurring and reminders
 * dispatchers (their crons fire together on the 1st; the reminders run also sweeps the outbox) read
 * the due keys, put users in turns and send batches to the queues; N workers per queue take them
 * (a simulated SQS, ./simulated-sqs.ts). Rounds repeat, as the crons do, until one sends nothing.
 * The stream subscriber, which deployed hands most emails to the outbox queue as they are queued,
 * does not run here: the next round's outbox sweep sends them. With the population spread over
 * several tables (emulator instances), each table's dispatchers run, one deployed dispatcher's shard
 * reads standing in for them, and the queue sends what they sent as that one dispatcher would have:
 * in turns across the users of every table (SimulatedSqs.hold and release).
 */
export const fannedOutJobs: JobRunner = {
  describe:
    "fanned-out jobs (queue/dispatch.ts): dispatchers send due keys in turns to a simulated SQS, N workers per queue",
  async drain(tables, now, workers, during) {
    const sqs = new SimulatedSqs(WORKERS, () => workers);
    const attached = tables.map((deps) => sqs.attach(deps));
    let rounds = 0;
    let changed = 0;
    let failedRuns = 0;
    let doneAt = performance.now();
    let beside: Promise<void> | undefined;
    for (;;) {
      rounds++;
      const before = sqs.counts.delivered;
      sqs.hold();
      await Promise.all(
        attached.flatMap((deps) =>
          [jobs.recurring, jobs.reminders].map((job) =>
            job(deps, now).catch(() => {
              failedRuns++;
            }),
          ),
        ),
      );
      sqs.release();
      if (rounds === 1 && during) beside = during(attached);
      await sqs.settled();
      const handled = sqs.counts.delivered - before;
      changed += handled;
      if (handled > 0) doneAt = performance.now();
      if (handled === 0 || rounds >= 8) {
        await beside;
        return { rounds, changed, failedRuns, doneAt, outcomes: sqs.outcomes };
      }
    }
  },
};
