import { STREAM_FILTERS } from "../packages/core/src/stream/filter";
import { STREAM_MAX_RETRY_ATTEMPTS } from "../packages/core/src/stream/retry";
import { publicUrl } from "./api";
import { email } from "./email";
import { functionBase, installedBeside } from "./runtime";
import { stripeSecretKey } from "./secrets";
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
 * The table stream's one subscriber (packages/functions/src/lambda/stream.ts): it turns each change into
 * events (the activity log, webhook first attempts, the bus) and delivers the email outbox, so the
 * API function carries neither SES nor the PDF renderer. It links the sender and the API (the
 * public link in emails), the bus, and the card processor's key: it expires the checkout session of
 * an invoice that became void or paid (or whose session was replaced), so the API function carries
 * no Stripe SDK. It may send to the failure queue (the event source mapping sends with its role).
 *
 * The event source mapping: only the records it acts on invoke it (core/src/stream/filter.ts: not
 * its own writes, not TTL deletions); ReportBatchItemFailures, so a failing record is retried from
 * itself on (the records before it are not redone); the retry bounds above, then the failure queue;
 * TRIM_HORIZON, so a mapping made after writes began still sees the last 24 hours (the handler is
 * idempotent, nothing is doubled); a one-second batching window keeps "within 5 seconds" with fewer
 * invocations.
 */
table.subscribe(
  "StreamSubscriber",
  {
    // Webhook attempts have 10 s each and run a bounded number at a time; email and PDFs a few more.
    ...functionBase("StreamSubscriber", "2 minutes"),
    handler: "packages/functions/src/lambda/stream.handler",
    // Both are needed now and then, not at a cold start: PDFs for attachments, Stripe for an expiry.
    ...installedBeside("pdf-lib", "stripe"),
    memory: "1024 MB",
    link: [table, email, publicUrl, bus, stripeSecretKey],
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
        args.destinationConfig = { onFailure: { destinationArn: streamFailures.arn } };
        // Paused by the stage's settings (a restore's copy-back): it resumes from where it stopped.
        args.enabled = !streamPaused;
      },
    },
  },
);
