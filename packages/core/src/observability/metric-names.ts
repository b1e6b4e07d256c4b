/**
 * The app's CloudWatch metrics, by name: what core counts (./metrics.ts) and what infra/alarms.ts
 * alarms on. Pure data, because SST evaluates infra/ on its own.
 */
export const METRICS_NAMESPACE = "Invoicing";

export const METRIC = {
  /** An email given up on: failed after its last attempt, or reclaimed from `sending` as failed. */
  emailsFailed: "EmailsFailed",
  /** A `sending` email found past its claim timeout and taken back (docs/operations.md). */
  emailsReclaimed: "EmailsReclaimed",
  /** A webhook attempt that failed (the receiver's answer, a timeout, the URL guard). */
  webhookAttemptsFailed: "WebhookAttemptsFailed",
  /** A stream record the subscriber skipped (the bus refused its event as invalid). */
  streamRecordsSkipped: "StreamRecordsSkipped",
  /** A stream record that failed and will be delivered again. */
  streamRecordsFailed: "StreamRecordsFailed",
  /** optimistic() gave up after MAX_ROUNDS (a 503). */
  optimisticLoopExhausted: "OptimisticLoopExhausted",
} as const;

export type MetricName = (typeof METRIC)[keyof typeof METRIC];
