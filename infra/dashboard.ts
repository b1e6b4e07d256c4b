import { METRICS_NAMESPACE } from "../packages/core/src/observability/metric-names";
import { api } from "./api";
import { feedbackFailures } from "./email";
import { declaredFunctions } from "./runtime";
import { stageSettings } from "./stages";
import { table } from "./storage";
import { streamFailures } from "./stream";

/**
 * One CloudWatch dashboard per named stage, `invoicing-<stage>`: requests, errors and latency of the
 * API; every function's errors and longest run; the stream's iterator age and both failure queues'
 * age; emails failed and SES reputation; webhook attempts failed; the table's throttles. Payments
 * are the Payments function's invocations and errors (the card processor's own dashboard has the
 * money). Personal stages get none (they have no alarms either).
 */
const settings = stageSettings($app.stage);
if (settings.alarms) {
  const region = settings.region;
  type Metric = (string | { stat?: string; label?: string })[];
  const widget = (title: string, metrics: $util.Input<Metric[]>, extra: Record<string, unknown> = {}) => ({
    type: "metric",
    width: 12,
    height: 6,
    properties: { title, region, view: "timeSeries", period: 300, metrics, ...extra },
  });
  const fn = (logicalName: string) => {
    const declared = declaredFunctions.find((f) => f.logicalName === logicalName);
    if (!declared) throw new Error(`infra/dashboard.ts: no function ${logicalName}`);
    return declared.name;
  };
  const app = { service: "invoicing", stage: $app.stage };
  const appMetric = (name: string): Metric => [METRICS_NAMESPACE, name, "service", app.service, "stage", app.stage];

  const body = $util
    .all([api.nodes.api.id, table.name, streamFailures.nodes.queue.name, feedbackFailures.nodes.queue.name])
    .apply(([apiId, tableName, streamQueue, feedbackQueue]) =>
      JSON.stringify({
        widgets: [
          widget("API requests and errors", [
            ["AWS/ApiGateway", "Count", "ApiId", apiId, "Stage", "$default", { stat: "Sum" }],
            ["AWS/ApiGateway", "4xx", "ApiId", apiId, "Stage", "$default", { stat: "Sum" }],
            ["AWS/ApiGateway", "5xx", "ApiId", apiId, "Stage", "$default", { stat: "Sum" }],
          ]),
          widget("API latency (p50, p99)", [
            ["AWS/ApiGateway", "Latency", "ApiId", apiId, "Stage", "$default", { stat: "p50" }],
            ["AWS/ApiGateway", "Latency", "ApiId", apiId, "Stage", "$default", { stat: "p99" }],
          ]),
          widget(
            "Function errors",
            declaredFunctions.map((f) => ["AWS/Lambda", "Errors", "FunctionName", f.name, { stat: "Sum" }]),
          ),
          widget(
            "Longest run (ms)",
            declaredFunctions.map((f) => ["AWS/Lambda", "Duration", "FunctionName", f.name, { stat: "Maximum" }]),
          ),
          widget("Stream iterator age (ms)", [
            ["AWS/Lambda", "IteratorAge", "FunctionName", fn("StreamSubscriber"), { stat: "Maximum" }],
          ]),
          widget("Failure queues: oldest message (s)", [
            ["AWS/SQS", "ApproximateAgeOfOldestMessage", "QueueName", streamQueue, { stat: "Maximum" }],
            ["AWS/SQS", "ApproximateAgeOfOldestMessage", "QueueName", feedbackQueue, { stat: "Maximum" }],
          ]),
          widget("Emails", [
            [...appMetric("EmailsFailed"), { stat: "Sum" }],
            [...appMetric("EmailsReclaimed"), { stat: "Sum" }],
            ["AWS/SES", "Send", { stat: "Sum" }],
          ]),
          widget("SES reputation", [
            ["AWS/SES", "Reputation.BounceRate", { stat: "Maximum" }],
            ["AWS/SES", "Reputation.ComplaintRate", { stat: "Maximum" }],
          ]),
          widget("Payments function", [
            ["AWS/Lambda", "Invocations", "FunctionName", fn("Payments"), { stat: "Sum" }],
            ["AWS/Lambda", "Errors", "FunctionName", fn("Payments"), { stat: "Sum" }],
          ]),
          widget("Webhooks and stream records", [
            [...appMetric("WebhookAttemptsFailed"), { stat: "Sum" }],
            [...appMetric("StreamRecordsFailed"), { stat: "Sum" }],
            [...appMetric("StreamRecordsSkipped"), { stat: "Sum" }],
          ]),
          widget("Table throttles", [
            ["AWS/DynamoDB", "ReadThrottleEvents", "TableName", tableName, { stat: "Sum" }],
            ["AWS/DynamoDB", "WriteThrottleEvents", "TableName", tableName, { stat: "Sum" }],
          ]),
        ],
      }),
    );
  new aws.cloudwatch.Dashboard("Dashboard", { dashboardName: `${$app.name}-${$app.stage}`, dashboardBody: body });
}
