import type { Context } from "aws-lambda";
import { jobs, type JobName, type JobResult } from "@invoicing/core/jobs/all";
import { log, withLogContext } from "@invoicing/core/observability/context-log";
import { createDeliveryDeps } from "../../capabilities/delivery-deps";

/**
 * A scheduled job's Lambda handler (infra/jobs.ts: one CronV2 per job). CronV2 invokes it with its
 * `event` ({} here), which the jobs ignore: a job works out what is due from the table and the
 * clock, so the handler is the same call `npm run jobs` makes. Dependencies are built once per
 * container, at init, like the API's. The run's deadline is the invocation's: a job that bounds its
 * work (webhooks) stops taking more before Lambda would cut it off.
 */
export function scheduledJob(name: JobName): (event?: unknown, context?: Context) => Promise<JobResult> {
  const deps = createDeliveryDeps();
  return (_event, context) =>
    withLogContext({ source: name, requestId: context?.awsRequestId }, async () => {
      const deadline = context?.getRemainingTimeInMillis ? Date.now() + context.getRemainingTimeInMillis() : undefined;
      const result = await jobs[name](deps, new Date(), { deadline });
      // The run's summary (counts, never record contents) in the function's log.
      log("info", "job run", { ...result });
      return result;
    });
}
