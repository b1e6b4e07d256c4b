import { METRICS_NAMESPACE } from "../packages/core/src/observability/metric-names";
import { api } from "./api";
import { emailSettings } from "./email-settings";
import { queueAlarms } from "./queues";
import { declaredFunctions } from "./runtime";
import { table } from "./storage";
import { streamFailures } from "./stream";

/**
 * The alarms an operator is paged by (docs/operations.md explains each and what to do). Every alarm
 * notifies the `Alarms` topic; ALARM_EMAIL (deploying shell or .env.<stage>) subscribes an address
 * to it, which AWS asks to confirm by email. Missing data is "not breaching": a function that did
 * not run is not failing.
 *
 * Imported last by sst.config.ts: the per-function alarms cover every function declared through
 * functionBase (infra/runtime.ts), so a new function gets them without a line here.
 */
const alarmTopic = new sst.aws.SnsTopic("Alarms");
const alarmEmail = process.env.ALARM_EMAIL?.trim();
if (alarmEmail) {
  new aws.sns.TopicSubscription("AlarmsEmail", { topic: alarmTopic.arn, protocol: "email", endpoint: alarmEmail });
}

interface AlarmSpec {
  namespace: string;
  metricName: string;
  dimensions: Record<string, $util.Input<string>>;
  statistic: "Sum" | "Maximum" | "Average";
  /** Seconds per period, and how many periods in a row must breach. */
  period: number;
  evaluationPeriods: number;
  comparisonOperator: "GreaterThanOrEqualToThreshold" | "GreaterThanThreshold";
  threshold: number;
  description: string;
}

function alarm(name: string, spec: AlarmSpec) {
  return new aws.cloudwatch.MetricAlarm(name, {
    name: `${$app.name}-${$app.stage}-${name}`,
    alarmDescription: `${spec.description} (docs/operations.md, "${name.replace(/^[A-Z][a-z]+(?=[A-Z])/, "")}")`,
    namespace: spec.namespace,
    metricName: spec.metricName,
    dimensions: spec.dimensions,
    statistic: spec.statistic,
    period: spec.period,
    evaluationPeriods: spec.evaluationPeriods,
    comparisonOperator: spec.comparisonOperator,
    threshold: spec.threshold,
    treatMissingData: "notBreaching",
    alarmActions: [alarmTopic.arn],
    okActions: [alarmTopic.arn],
  });
}

const FIVE_MINUTES = 300;

// Every function: unhandled errors, throttles, and a run that came within 80 % of its timeout (the
// next one may not finish: work is cut off, a request answered by API Gateway's bare 503).
for (const fn of declaredFunctions) {
  const lambda = (metricName: string, rest: Omit<AlarmSpec, "namespace" | "metricName" | "dimensions">) =>
    alarm(`${fn.logicalName}${metricName === "Duration" ? "NearTimeout" : metricName}`, {
      namespace: "AWS/Lambda",
      metricName,
      dimensions: { FunctionName: fn.name },
      ...rest,
    });
  lambda("Errors", {
    statistic: "Sum",
    period: FIVE_MINUTES,
    evaluationPeriods: 1,
    comparisonOperator: "GreaterThanOrEqualToThreshold",
    threshold: 1,
    description: `${fn.name} threw or timed out`,
  });
  lambda("Throttles", {
    statistic: "Sum",
    period: FIVE_MINUTES,
    evaluationPeriods: 1,
    comparisonOperator: "GreaterThanOrEqualToThreshold",
    threshold: 1,
    description: `${fn.name} was throttled (account concurrency exhausted)`,
  });
  lambda("Duration", {
    statistic: "Maximum",
    period: FIVE_MINUTES,
    evaluationPeriods: 1,
    comparisonOperator: "GreaterThanOrEqualToThreshold",
    threshold: Math.round(fn.timeoutSeconds * 1000 * 0.8),
    description: `${fn.name} ran for 80 % of its ${fn.timeoutSeconds} s timeout`,
  });
}

const subscriber = declaredFunctions.find((fn) => fn.logicalName === "StreamSubscriber");
if (!subscriber) throw new Error("infra/alarms.ts: the stream subscriber must be declared before the alarms");

// The stream: the subscriber is behind (events, webhooks and emails late) by more than a minute for
// five minutes in a row; or it gave up on records (they are in the failure queue, to replay).
alarm("StreamIteratorAge", {
  namespace: "AWS/Lambda",
  metricName: "IteratorAge",
  dimensions: { FunctionName: subscriber.name },
  statistic: "Maximum",
  period: 60,
  evaluationPeriods: 5,
  comparisonOperator: "GreaterThanOrEqualToThreshold",
  threshold: 60_000,
  description: "the stream subscriber is more than a minute behind the table's changes",
});
alarm("StreamFailuresNotEmpty", {
  namespace: "AWS/SQS",
  metricName: "ApproximateNumberOfMessagesVisible",
  dimensions: { QueueName: streamFailures.nodes.queue.name },
  statistic: "Maximum",
  period: 60,
  evaluationPeriods: 1,
  comparisonOperator: "GreaterThanOrEqualToThreshold",
  threshold: 1,
  description: "stream records were given up on: replay them within 24 hours of the change",
});

// Each work queue: a backlog (its oldest message's age) and a dead-letter queue that is not empty.
for (const { name, spec } of queueAlarms) alarm(name, spec);

// The API answered 5xx (API Gateway's own, or the app's 500/503) five times in five minutes.
alarm("Api5xx", {
  namespace: "AWS/ApiGateway",
  metricName: "5xx",
  dimensions: { ApiId: api.nodes.api.id, Stage: "$default" },
  statistic: "Sum",
  period: FIVE_MINUTES,
  evaluationPeriods: 1,
  comparisonOperator: "GreaterThanOrEqualToThreshold",
  threshold: 5,
  description: "the API answered 5xx five times or more in five minutes",
});

// DynamoDB refused reads or writes (on-demand: a partition's limit, or a traffic spike past twice
// the previous peak). The SDK retries, then the client gets 503.
for (const [name, metricName] of [
  ["TableReadThrottles", "ReadThrottleEvents"],
  ["TableWriteThrottles", "WriteThrottleEvents"],
] as const) {
  alarm(name, {
    namespace: "AWS/DynamoDB",
    metricName,
    dimensions: { TableName: table.name },
    statistic: "Sum",
    period: FIVE_MINUTES,
    evaluationPeriods: 1,
    comparisonOperator: "GreaterThanOrEqualToThreshold",
    threshold: 1,
    description: `DynamoDB throttled the table (${metricName})`,
  });
}

// SES's reputation, per account and region: SES reviews an account at a 5 % bounce rate and a 0.1 %
// complaint rate, and may pause its sending. Only the stage that owns the identity watches it (a
// sharing stage would page twice for the same account).
if (emailSettings($app.stage, process.env).identity === "own") {
  alarm("SesBounceRate", {
    namespace: "AWS/SES",
    metricName: "Reputation.BounceRate",
    dimensions: {},
    statistic: "Maximum",
    period: 900,
    evaluationPeriods: 1,
    comparisonOperator: "GreaterThanThreshold",
    threshold: 0.05,
    description: "SES bounce rate above 5 %",
  });
  alarm("SesComplaintRate", {
    namespace: "AWS/SES",
    metricName: "Reputation.ComplaintRate",
    dimensions: {},
    statistic: "Maximum",
    period: 900,
    evaluationPeriods: 1,
    comparisonOperator: "GreaterThanThreshold",
    threshold: 0.001,
    description: "SES complaint rate above 0.1 %",
  });
}

// The app's own metrics (packages/core/src/observability): what was given up on.
const appMetric = (name: string, metricName: string, description: string) =>
  alarm(name, {
    namespace: METRICS_NAMESPACE,
    metricName,
    dimensions: { service: "invoicing", stage: $app.stage },
    statistic: "Sum",
    period: FIVE_MINUTES,
    evaluationPeriods: 1,
    comparisonOperator: "GreaterThanOrEqualToThreshold",
    threshold: 1,
    description,
  });
appMetric("EmailsFailed", "EmailsFailed", "an email was given up on (failed after its last attempt, or reclaimed)");
appMetric("StreamRecordsSkipped", "StreamRecordsSkipped", "the subscriber skipped a stream record it cannot process");
appMetric(
  "OptimisticLoopExhausted",
  "OptimisticLoopExhausted",
  "a read-decide-write loop gave up (503) after its last round",
);
