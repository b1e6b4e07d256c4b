import type { Deps } from "@invoicing/core/deps";
import { jobs } from "@invoicing/core/jobs/all";
import { createStreamReader } from "@invoicing/local/stream-reader";
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
 * of a figure is `workers`: the concurrency the deployed runner would be given.
 */
export interface JobRunner {
  /** What the figures are "of": printed beside them. */
  describe: string;
  drain(deps: Deps, now: Date, workers: number): Promise<Drained>;
}

export interface Drained {
  rounds: number;
  changed: number;
  /** Job runs that failed (e.g. the SDK gave up on a throttled partition): the next round runs again. */
  failedRuns: number;
  /** performance.now() when the last round that changed something ended: the drain's end. */
  doneAt: number;
}

/**
 * The runner as main has it: each job is one serial loop over its due list (jobs/all.ts). Given N
 * workers it can only run N copies of the loops side by side (N overlapping invocations of the
 * scheduled functions), which the jobs allow (each change is a conditional write) but do not divide
 * between them: each copy reads the whole list and the copies race for the same items.
 */
export const serialJobs: JobRunner = {
  describe: "serial jobs: N overlapping runs of recurring then reminders (its outbox sweep)",
  async drain(deps, now, workers) {
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
        Array.from(
          { length: workers },
          async () =>
            (await attempt(() => jobs.recurring(deps, now))) + (await attempt(() => jobs.reminders(deps, now))),
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
 * The local stream reader (polling every 100 ms) feeding the stream subscriber as the service has
 * it: before the fan-out it made every delivery itself after each batch; with it, it hands emails,
 * webhook first attempts and checkout expiries to the work queues (in process: their workers at
 * the deployed concurrency, queue/names.ts).
 */
export const streamSubscriber: Background = {
  describe: "the stream subscriber (core/src/stream/subscriber.ts) fed by the local stream reader every 100 ms",
  async start(deps, endpoint, tableName) {
    const reader = createStreamReader(deps, { endpoint, tableName });
    const stop = reader.start(100);
    return async () => {
      await stop();
      reader.close();
    };
  },
};

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
 * does not run here: the next round's outbox sweep sends them.
 */
export const fannedOutJobs: JobRunner = {
  describe:
    "fanned-out jobs (queue/dispatch.ts): dispatchers send due keys in turns to a simulated SQS, N workers per queue",
  async drain(deps, now, workers) {
    const sqs = new SimulatedSqs(WORKERS, () => workers);
    const withQueue = sqs.attach(deps);
    let rounds = 0;
    let changed = 0;
    let failedRuns = 0;
    let doneAt = performance.now();
    for (;;) {
      rounds++;
      const before = sqs.counts.delivered;
      await Promise.all(
        [jobs.recurring, jobs.reminders].map((job) =>
          job(withQueue, now).catch(() => {
            failedRuns++;
          }),
        ),
      );
      await sqs.settled();
      const handled = sqs.counts.delivered - before;
      changed += handled;
      if (handled > 0) doneAt = performance.now();
      if (handled === 0 || rounds >= 8) return { rounds, changed, failedRuns, doneAt };
    }
  },
};
