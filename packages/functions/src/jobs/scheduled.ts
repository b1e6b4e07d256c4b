import type { Context } from "aws-lambda";
import { jobs, type JobName, type JobResult } from "@invoicing/core/jobs/all";
import { log, withLogContext } from "@invoicing/core/observability/context-log";
import { createDeliveryDeps } from "../delivery-deps";

/**
 * A scheduled job's Lambda handler (infra/jobs.ts: one CronV2 per job). CronV2 invokes it with its
 * `event` ({} here), which the jobs ignore: a job works out what is due from the table and the
 * clock, so the handler is the same call `npm run jobs` makes. Dependencies are built once per
 * container, at init, like the API's.
 */
export function scheduledJob(name: JobName): (event?: unknown, context?: Context) => Promise<JobResult> {
  const deps = createDeliveryDeps();
  return (_event, context) =>
    withLogContext({ source: name, requestId: context?.awsRequestId }, async () => {
      const result = await jobs[name](deps, new Date());
      // The run's summary (counts, never record contents) in the function's log.
      log("info", "job run", { ...result });
      return result;
    });
}
