import { STREAM_FILTERS } from "../packages/core/src/stream/filter";
import { STREAM_MAX_RETRY_ATTEMPTS } from "../packages/core/src/stream/retry";
import { queues } from "./queues";
import { functionBase } from "./runtime";
import { stageSettings } from "./stages";
import { table } from "./storage";

/**
 * The app's EventBridge bus: every event is also put here (`source` "invoicing", `detail-type` the
 * event type) for consumers inside AWS (docs/events.md).
 */
const bus = new sst.aws.Bus("Bus");
/** Linking the bus grants PutEvents on it, nothing else (SST's default is `events:*`). */
sst.Linkable.wrap(sst.aws.Bus, (linked) => ({
  properties: { name: linked.name, arn: linked.arn },
  include: [sst.aws.permission({ actions: ["events:PutEvents"], resources: [linked.arn] })],
}));

/**
 * Where the stream's records go when the subscriber gives up on them (below): a queue that keeps
 * each message 14 days (SQS's longest). A message holds no record, only the batch's place in the
 * stream (shard, first and last sequence number); `npm run jobs -- replay-stream-failures` reads
 * those records from the stream again and runs the subscriber on them, while the stream still has
 * them (24 hours). An alarm fires as soon as the queue is not empty (infra/alarms.ts).
 */
export const streamFailures = new sst.aws.Queue("StreamFailures", {
  transform: { queue: { messageRetentionSeconds: 14 * 86_400 } },
});

/** Paused by the stage's settings (infra/stages.ts, streamPaused) for a restore's copy-back. */
const streamPaused = stageSettings($app.stage).streamPaused === true;

/** The subscription's failure handling, in one place for the tests and docs/operations.md. */
const STREAM_RETRY = {
  // A record that fails is retried from itself (ReportBatchItemFailures) this many times, the batch
  // split in halves on each (bisect), so one bad record ends up alone and only it is given up on.
  // The same bound as npm start's reader (core/src/stream/retry.ts).
  maximumRetryAttempts: STREAM_MAX_RETRY_ATTEMPTS,
  bisectBatchOnFunctionError: true,
  // And never held longer than an hour: what is older goes to the queue, so a stuck record delays its
  // shard (every later change of the users whose keys hash there) by an hour at most, not the
  // stream's 24 hours, and leaves 23 hours to replay it.
  maximumRecordAgeInSeconds: 3600,
} as const;

/**
 * The table stream's one subscriber (packages/functions/src/lambda/stream.ts): in stream order it
 * stores each change's events (the activity log, webhook first attempts), puts them on the bus (10
 * per PutEvents call) and keeps the reports ledger; it hands email delivery, webhook first attempts
 * checkout-session expiry and a Peppol send's first hand-over to their queues (infra/queues.ts), so no
 * receiver, SES, the card processor or the Peppol provider holds its shard. It links the table, the
 * bus and those four queues (send only). It may
 * send to the failure queue (the event source mapping sends with its role).
 *
 * The event source mapping: only the records it acts on invoke it (core/src/stream/filter.ts: not
 * its own writes, not TTL deletions); ReportBatchItemFailures, so a failing record is retried from
 * itself on (the records before it are not redone); the retry bounds above, then the failure queue;
 * TRIM_HORIZON, so a mapping made after writes began still sees the last 24 hours (the handler is
 * idempotent, nothing is doubled); a one-second batching window keeps "within 5 seconds" with fewer
 * invocations.
 *
 * PARALLELIZATION_FACTOR: batches of one stream shard handled at once. AWS keeps the records of one
 * partition key in order at any factor (Lambda hashes the partition key to one of the shard's
 * concurrent batches); the table's partition key is the user (USER#<id>), and everything the
 * subscriber must do in order — a resource's events, the reports ledger's aggregates — is one
 * user's. So users on one shard no longer wait for each other, while each user's changes stay in
 * order (docs/events.md, "Ordering").
 */
export const PARALLELIZATION_FACTOR = 10;

table.subscribe(
  "StreamSubscriber",
  {
    // Table writes, PutEvents and queue sends only; it stops taking records 30 s before the end.
    ...functionBase("StreamSubscriber", "1 minute"),
    handler: "packages/functions/src/lambda/stream.handler",
    memory: "512 MB",
    link: [
      table,
      bus,
      queues.outbox.queue,
      queues.webhooks.queue,
      queues["checkout-expiry"].queue,
      queues.peppol.queue,
    ],
    permissions: [{ actions: ["sqs:SendMessage"], resources: [streamFailures.arn] }],
  },
  {
    filters: STREAM_FILTERS,
    transform: {
      eventSourceMapping: (args) => {
        args.functionResponseTypes = ["ReportBatchItemFailures"];
        args.startingPosition = "TRIM_HORIZON";
        args.batchSize = 100;
        args.maximumBatchingWindowInSeconds = 1;
        args.maximumRetryAttempts = STREAM_RETRY.maximumRetryAttempts;
        args.bisectBatchOnFunctionError = STREAM_RETRY.bisectBatchOnFunctionError;
        args.maximumRecordAgeInSeconds = STREAM_RETRY.maximumRecordAgeInSeconds;
        args.parallelizationFactor = PARALLELIZATION_FACTOR;
        args.destinationConfig = { onFailure: { destinationArn: streamFailures.arn } };
        // Paused by the stage's settings (a restore's copy-back): it resumes from where it stopped.
        args.enabled = !streamPaused;
      },
    },
  },
);
