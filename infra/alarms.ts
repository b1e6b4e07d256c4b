import { METRICS_NAMESPACE } from "../packages/core/src/observability/metric-names";
import { api } from "./api";
import { emailSettings } from "./email-settings";
import { feedbackFailures } from "./email";
import { jobIntervals } from "./jobs";
import { queueAlarms } from "./queues";
import { declaredFunctions } from "./runtime";
import { chatChannels } from "./chatbot";
import { type AlarmTargets, stageSettings } from "./stages";
import { table } from "./storage";
import { streamFailures } from "./stream";

/**
 * The alarms (docs/operations.md explains each, under the section its description names). Who hears
 * them is a stage setting in code (infra/stages.ts, `alarms`): production refuses to deploy without
 * someone to page. Two topics:
 * - `Alarms` pages: email addresses, and optionally a pager's HTTPS endpoint and chat channels
 *   (AWS Chatbot, infra/chatbot.ts);
 * - `Warnings` informs: early signs and slow backlogs that need nobody at night.
 * A personal stage (alarms: false) gets neither, nor any alarm: ~40 alarms for nobody.
 *
 * Missing data is "not breaching" for the failure alarms (a function that did not run is not
 * failing) and "breaching" for the "stopped running" ones (a job whose schedule is gone emits nothing).
 *
 * Imported last by sst.config.ts: the per-function alarms cover every function declared through
 * functionBase (infra/runtime.ts), so a new function gets them without a line here.
 */
const settings = stageSettings($app.stage);

/** The two topics, or undefined on a stage without alarms. */
export const alarmTopics = settings.alarms ? declareAlarms(settings.alarms) : undefined;

function declareAlarms(targets: AlarmTargets) {
  const pageTopic = new sst.aws.SnsTopic("Alarms");
  const warnTopic = new sst.aws.SnsTopic("Warnings");
  targets.page.emails.forEach((endpoint, i) => {
    new aws.sns.TopicSubscription(`AlarmsEmail${i + 1}`, { topic: pageTopic.arn, protocol: "email", endpoint });
  });
  (targets.page.https ?? []).forEach((endpoint, i) => {
    new aws.sns.TopicSubscription(`AlarmsPager${i + 1}`, { topic: pageTopic.arn, protocol: "https", endpoint });
  });
  targets.warn.emails.forEach((endpoint, i) => {
    new aws.sns.TopicSubscription(`WarningsEmail${i + 1}`, { topic: warnTopic.arn, protocol: "email", endpoint });
  });
  if (targets.page.chat?.length) chatChannels(targets.page.chat, pageTopic.arn);

  interface AlarmSpec {
    namespace: string;
    metricName: string;
    dimensions: Record<string, $util.Input<string>>;
    statistic: "Sum" | "Maximum" | "Average";
    /** Seconds per period, and how many periods in a row must breach. */
    period: number;
    evaluationPeriods: number;
    comparisonOperator: "GreaterThanOrEqualToThreshold" | "GreaterThanThreshold" | "LessThanThreshold";
    threshold: number;
    description: string;
    /** The section of docs/operations.md that says what to do (its heading's anchor). */
    runbook: string;
    /** `page` (the default) notifies the Alarms topic; `warn` the Warnings topic. */
    severity?: "page" | "warn";
    /** "breaching" for an alarm on something that should keep happening. */
    missingData?: "notBreaching" | "breaching";
  }

  function alarm(name: string, spec: AlarmSpec) {
    const topic = spec.severity === "warn" ? warnTopic : pageTopic;
    return new aws.cloudwatch.MetricAlarm(name, {
      name: `${$app.name}-${$app.stage}-${name}`,
      alarmDescription: `${spec.description}. Runbook: docs/operations.md#${spec.runbook}`,
      namespace: spec.namespace,
      metricName: spec.metricName,
      dimensions: spec.dimensions,
      statistic: spec.statistic,
      period: spec.period,
      evaluationPeriods: spec.evaluationPeriods,
      comparisonOperator: spec.comparisonOperator,
      threshold: spec.threshold,
      treatMissingData: spec.missingData ?? "notBreaching",
      alarmActions: [topic.arn],
      okActions: [topic.arn],
    });
  }

  const FIVE_MINUTES = 300;
  /**
   * Functions whose long runs are a backlog being worked through by design, not a hang: the webhooks
   * job spends its minute on due attempts, the subscriber stops taking records 30 s before its
   * timeout. Their NearTimeout warns; everyone else's pages.
   */
  const BACKLOG_BY_DESIGN = new Set(["WebhooksJob", "StreamSubscriber"]);

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
      runbook: "function-errors",
    });
    lambda("Throttles", {
      statistic: "Sum",
      period: FIVE_MINUTES,
      evaluationPeriods: 1,
      comparisonOperator: "GreaterThanOrEqualToThreshold",
      threshold: 1,
      description: `${fn.name} was throttled (concurrency exhausted)`,
      runbook: "function-throttles",
    });
    lambda("Duration", {
      statistic: "Maximum",
      period: FIVE_MINUTES,
      evaluationPeriods: 1,
      comparisonOperator: "GreaterThanOrEqualToThreshold",
      threshold: Math.round(fn.timeoutSeconds * 1000 * 0.8),
      description: `${fn.name} ran for 80 % of its ${fn.timeoutSeconds} s timeout`,
      runbook: "function-near-timeout",
      severity: BACKLOG_BY_DESIGN.has(fn.logicalName) ? "warn" : "page",
    });
  }

  // "It stopped running": each scheduled job is invoked at least once in twice its interval. No data
  // (the schedule deleted or disabled, the function gone) is breaching.
  for (const [logicalName, seconds] of Object.entries(jobIntervals)) {
    const fn = declaredFunctions.find((declared) => declared.logicalName === logicalName);
    if (!fn) throw new Error(`infra/alarms.ts: job ${logicalName} is not declared through functionBase`);
    alarm(`${logicalName}NotRunning`, {
      namespace: "AWS/Lambda",
      metricName: "Invocations",
      dimensions: { FunctionName: fn.name },
      statistic: "Sum",
      period: 2 * seconds,
      evaluationPeriods: 1,
      comparisonOperator: "LessThanThreshold",
      threshold: 1,
      description: `${fn.name} was not invoked for twice its ${seconds / 60}-minute interval`,
      runbook: "job-not-running",
      missingData: "breaching",
    });
  }
  // The scheduler could not invoke a target (permissions, a deleted function, Lambda refusing).
  alarm("SchedulerTargetErrors", {
    namespace: "AWS/Scheduler",
    metricName: "TargetErrorCount",
    dimensions: {},
    statistic: "Sum",
    period: FIVE_MINUTES,
    evaluationPeriods: 1,
    comparisonOperator: "GreaterThanOrEqualToThreshold",
    threshold: 1,
    description: "EventBridge Scheduler failed to invoke a job's function",
    runbook: "scheduler-target-errors",
  });

  // Each work queue: a backlog (its oldest message's age) and a dead-letter queue that is not empty.
  for (const { name, spec } of queueAlarms) {
    alarm(name, { ...spec, runbook: name.endsWith("DeadLetters") ? "a-dead-letter-queue-fills" : "a-queue-backs-up" });
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
    runbook: "stream-iterator-age",
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
    runbook: "stream-failures-not-empty",
  });
  // SNS invokes the SES feedback function asynchronously: what it gives up on lands in its queue.
  alarm("EmailFeedbackFailuresNotEmpty", {
    namespace: "AWS/SQS",
    metricName: "ApproximateNumberOfMessagesVisible",
    dimensions: { QueueName: feedbackFailures.nodes.queue.name },
    statistic: "Maximum",
    period: 60,
    evaluationPeriods: 1,
    comparisonOperator: "GreaterThanOrEqualToThreshold",
    threshold: 1,
    description: "SES bounce or complaint notices failed to be recorded",
    runbook: "email-feedback-failures-not-empty",
  });

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
    runbook: "api-5xx",
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
      runbook: "table-throttles",
    });
  }

  // SES's reputation, per account and region: SES reviews an account at a 5 % bounce rate and a 0.1 %
  // complaint rate, and may pause its sending. A warning comes well before (2 %, 0.05 %), while there
  // is time to act. Only the stage that owns the identity watches it (a sharing stage would notify
  // twice for the same account).
  if (emailSettings($app.stage, process.env).identity === "own") {
    const ses = (name: string, metricName: string, threshold: number, what: string, severity: "page" | "warn") =>
      alarm(name, {
        namespace: "AWS/SES",
        metricName,
        dimensions: {},
        statistic: "Maximum",
        period: 900,
        evaluationPeriods: 1,
        comparisonOperator: "GreaterThanThreshold",
        threshold,
        description: what,
        runbook: "ses-reputation",
        severity,
      });
    ses("SesBounceRate", "Reputation.BounceRate", 0.05, "SES bounce rate above 5 % (AWS reviews the account)", "page");
    ses("SesBounceRateWarning", "Reputation.BounceRate", 0.02, "SES bounce rate above 2 %", "warn");
    ses("SesComplaintRate", "Reputation.ComplaintRate", 0.001, "SES complaint rate above 0.1 % (AWS reviews)", "page");
    ses("SesComplaintRateWarning", "Reputation.ComplaintRate", 0.0005, "SES complaint rate above 0.05 %", "warn");
  }

  // The app's own metrics (packages/core/src/observability): what was given up on.
  const appMetric = (name: string, description: string, runbook: string) =>
    alarm(name, {
      namespace: METRICS_NAMESPACE,
      metricName: name,
      dimensions: { service: "invoicing", stage: $app.stage },
      statistic: "Sum",
      period: FIVE_MINUTES,
      evaluationPeriods: 1,
      comparisonOperator: "GreaterThanOrEqualToThreshold",
      threshold: 1,
      description,
      runbook,
    });
  appMetric("EmailsFailed", "an email was given up on (failed after its last attempt, or reclaimed)", "emails-failed");
  appMetric(
    "StreamRecordsSkipped",
    "the subscriber skipped a stream record it cannot process",
    "stream-records-skipped",
  );
  appMetric(
    "OptimisticLoopExhausted",
    "a read-decide-write loop gave up (503) after its last round",
    "optimistic-loop-exhausted",
  );

  return { page: pageTopic, warn: warnTopic };
}
