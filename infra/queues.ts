import {
  BATCH_SIZE,
  QUEUE_NAMES,
  QUEUE_RESOURCES,
  WORKER_CONCURRENCY,
  type QueueName,
} from "../packages/core/src/capabilities/queue-names";
import { publicUrl } from "./api";
import { email } from "./email";
import { functionBase, pdfLibBeside } from "./runtime";
import { cardPayments, storecoveApiKey, stripeSecretKey } from "./secrets";
import { table } from "./storage";

/**
 * The work queues (docs/operations.md, "Queues"; packages/core/src/queue/port.ts): one SQS queue per
 * kind of background work, each with its dead-letter queue and its Lambda worker. The scheduled
 * jobs (infra/jobs.ts) and the stream subscriber (infra/stream.ts) send to them; the workers do the
 * work, at most WORKER_CONCURRENCY[queue] at once (the event source mapping's maximum concurrency),
 * so one queue's backlog takes neither the other queues' workers nor the account's Lambda
 * concurrency.
 */

/** A worker's timeout; each stops taking records 15 s before it (lambda/workers/sqs-worker.ts). */
const WORKER_TIMEOUT_SECONDS = 60;
/**
 * How long a message taken by a worker stays invisible: six times the worker's timeout (AWS's advice
 * for Lambda), so a message is never given to a second worker while the first can still be on it.
 */
export const VISIBILITY_TIMEOUT_SECONDS = 6 * WORKER_TIMEOUT_SECONDS;
/**
 * Receives before a message goes to the dead-letter queue: a worker gives a message back only for an
 * error that is not the record's (the table or a provider unreachable), so five receives over
 * ~30 minutes outlast a short outage, and a message that still fails is kept for an operator.
 */
export const MAX_RECEIVES = 5;
/** Dead letters are kept 14 days (SQS's longest) for `npm run jobs -- redrive-queue`. */
const DEAD_LETTER_RETENTION_SECONDS = 14 * 86_400;

/**
 * What each worker links (least privilege) and carries: the table always; the public base URL where it
 * writes links into emails (reminders, recurring's auto-send); the sender and the PDF renderer for
 * the outbox; the card processor's key for checkout expiries; the CardPayments flag for recurring's
 * auto-send (it stores a pay link); the Peppol provider's key for a send's first hand-over.
 */
const WORKERS: Record<QueueName, { link: unknown[]; memory: "512 MB" | "1024 MB"; pdf?: true }> = {
  overdue: { link: [table], memory: "512 MB" },
  recurring: { link: [table, publicUrl, cardPayments], memory: "512 MB" },
  reminders: { link: [table, publicUrl], memory: "512 MB" },
  "expire-estimates": { link: [table], memory: "512 MB" },
  outbox: { link: [table, email, publicUrl], memory: "1024 MB", pdf: true },
  webhooks: { link: [table], memory: "512 MB" },
  "checkout-expiry": { link: [table, stripeSecretKey], memory: "512 MB" },
  peppol: { link: [table, storecoveApiKey], memory: "512 MB" },
};

/** Linking a work queue lets a function send to it, nothing else (SST's default is `sqs:*`). */
sst.Linkable.wrap(sst.aws.Queue, (linked) => ({
  properties: { url: linked.url },
  include: [sst.aws.permission({ actions: ["sqs:SendMessage"], resources: [linked.arn] })],
}));

function workQueue(queue: QueueName) {
  const logicalName = QUEUE_RESOURCES[queue];
  const dead = new sst.aws.Queue(`${logicalName}Dead`, {
    transform: { queue: { messageRetentionSeconds: DEAD_LETTER_RETENTION_SECONDS } },
  });
  const main = new sst.aws.Queue(logicalName, {
    visibilityTimeout: `${VISIBILITY_TIMEOUT_SECONDS} seconds`,
    dlq: { queue: dead.arn, retry: MAX_RECEIVES },
  });
  const worker = WORKERS[queue];
  const workerName = `${logicalName.replace(/Queue$/, "")}Worker`;
  main.subscribe(
    {
      ...functionBase(workerName, `${WORKER_TIMEOUT_SECONDS} seconds`),
      handler: `packages/functions/src/lambda/workers/${queue}.handler`,
      memory: worker.memory,
      link: worker.link,
      ...(worker.pdf ? pdfLibBeside : {}),
    },
    {
      // BATCH_SIZE messages per invocation, no waiting to fill it; only the failed ones come again.
      batch: { size: BATCH_SIZE, partialResponses: true },
      transform: {
        eventSourceMapping: (args) => {
          args.scalingConfig = { maximumConcurrency: WORKER_CONCURRENCY[queue] };
        },
      },
    },
  );
  return { queue: main, dead };
}

export const queues = Object.fromEntries(QUEUE_NAMES.map((queue) => [queue, workQueue(queue)])) as Record<
  QueueName,
  ReturnType<typeof workQueue>
>;

/**
 * The queues' alarms (added by infra/alarms.ts to its topic): a queue whose oldest message waits
 * longer than its work may (the workers do not keep up, or are failing), and a dead-letter queue
 * that is not empty (a message failed MAX_RECEIVES times). docs/operations.md says what to do.
 */
export const QUEUE_AGE_LIMIT_SECONDS: Record<QueueName, number> = {
  // A due job's work waits at most one more run (15 minutes) beyond its own.
  overdue: 1800,
  recurring: 1800,
  reminders: 1800,
  "expire-estimates": 7200,
  // Emails and first attempts are what users wait for: "within 5 seconds" is their normal.
  outbox: 300,
  webhooks: 300,
  "checkout-expiry": 600,
  // A first hand-over normally within seconds; what waits here the peppol job (every 5 minutes)
  // also finds due, so 10 minutes is a queue that is not worked, not a delivery lost.
  peppol: 600,
};

export const queueAlarms = QUEUE_NAMES.flatMap((queue) => {
  const { queue: main, dead } = queues[queue];
  const name = QUEUE_RESOURCES[queue].replace(/Queue$/, "");
  return [
    {
      name: `${name}QueueBacklog`,
      spec: {
        namespace: "AWS/SQS",
        metricName: "ApproximateAgeOfOldestMessage",
        dimensions: { QueueName: main.nodes.queue.name },
        statistic: "Maximum" as const,
        period: 60,
        evaluationPeriods: 5,
        comparisonOperator: "GreaterThanOrEqualToThreshold" as const,
        threshold: QUEUE_AGE_LIMIT_SECONDS[queue],
        description: `the ${queue} queue's oldest message waits longer than ${QUEUE_AGE_LIMIT_SECONDS[queue]} s: its workers do not keep up`,
      },
    },
    {
      name: `${name}DeadLetters`,
      spec: {
        namespace: "AWS/SQS",
        metricName: "ApproximateNumberOfMessagesVisible",
        dimensions: { QueueName: dead.nodes.queue.name },
        statistic: "Maximum" as const,
        period: 60,
        evaluationPeriods: 1,
        comparisonOperator: "GreaterThanOrEqualToThreshold" as const,
        threshold: 1,
        description: `messages of the ${queue} queue failed ${MAX_RECEIVES} times: find why, then redrive them`,
      },
    },
  ];
});
