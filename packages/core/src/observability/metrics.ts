import { logContext } from "./context-log";
import { METRICS_NAMESPACE, type MetricName } from "./metric-names";

/**
 * Counting what an operator watches (./metric-names.ts), as CloudWatch Embedded Metric Format: one
 * JSON log line that CloudWatch turns into a metric point, no API call and no dependency. Dimensions
 * `service` ("invoicing") and `stage` (the deployed stage, from the app SST links to every function;
 * "local" otherwise), which infra/alarms.ts names. The line carries the log context's ids too.
 *
 * The same format Powertools' Metrics writes; written here in a few lines so every function, the
 * API's included, can count without carrying the library (docs/operations.md has the measurements).
 */
export function countMetric(name: MetricName, value = 1, env: NodeJS.ProcessEnv = process.env): void {
  const stage = stageOf(env);
  console.log(
    JSON.stringify({
      _aws: {
        Timestamp: Date.now(),
        CloudWatchMetrics: [
          {
            Namespace: METRICS_NAMESPACE,
            Dimensions: [["service", "stage"]],
            Metrics: [{ Name: name, Unit: "Count" }],
          },
        ],
      },
      service: "invoicing",
      stage,
      [name]: value,
      ...logContext(),
    }),
  );
}

/** SST gives every function its app as SST_RESOURCE_App = {"name","stage"}. */
function stageOf(env: NodeJS.ProcessEnv): string {
  try {
    const app = JSON.parse(env.SST_RESOURCE_App ?? "") as { stage?: unknown };
    if (typeof app.stage === "string") return app.stage;
  } catch {
    // not deployed
  }
  return "local";
}
