import { api } from "./api";
import { email } from "./email";
import { lambdaRuntime } from "./runtime";
import { stripeSecretKey } from "./secrets";
import { table } from "./storage";

/**
 * The app's EventBridge bus: every event is also put here (`source` "invoicing", `detail-type` the
 * event type) for consumers inside AWS (docs/events.md).
 */
export const bus = new sst.aws.Bus("Bus");

/**
 * The table stream's one subscriber (packages/functions/src/lambda/stream.ts): it turns each change into
 * events (the activity log, webhook first attempts, the bus) and delivers the email outbox, so the
 * API function carries neither SES nor the PDF renderer. It links the sender and the API (the
 * public link in emails), the bus, and the card processor's key: it expires the checkout session of
 * an invoice that became void or paid (or whose session was replaced), so the API function carries
 * no Stripe SDK.
 *
 * The event source mapping: ReportBatchItemFailures, so a failing record is retried from itself
 * on (the records before it are not redone); TRIM_HORIZON, so a mapping made after writes began
 * still sees the last 24 hours (the handler is idempotent, nothing is doubled); a one-second
 * batching window keeps "within 5 seconds" with fewer invocations.
 */
table.subscribe(
  "StreamSubscriber",
  {
    handler: "packages/functions/src/lambda/stream.handler",
    ...lambdaRuntime,
    // Webhook attempts have 10 s each and run a bounded number at a time; email and PDFs a few more.
    timeout: "2 minutes",
    memory: "1024 MB",
    link: [table, email, api, bus, stripeSecretKey],
  },
  {
    transform: {
      eventSourceMapping: (args) => {
        args.functionResponseTypes = ["ReportBatchItemFailures"];
        args.startingPosition = "TRIM_HORIZON";
        args.batchSize = 100;
        args.maximumBatchingWindowInSeconds = 1;
      },
    },
  },
);
