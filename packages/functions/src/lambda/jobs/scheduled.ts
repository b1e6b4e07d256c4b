import type { Context } from "aws-lambda";
import { withDeadline } from "@invoicing/core/db/deadline";
import type { Job, JobName, JobResult } from "@invoicing/core/job";
import { invocationDeadline } from "../deadline";
import { log, withLogContext } from "@invoicing/core/observability/context-log";
import { createDeps, type Capability } from "../../capabilities/create-deps";
import { workQueue } from "../../capabilities/work-queue";

/**
 * A scheduled job's Lambda handler (infra/jobs.ts: one CronV2 per job). CronV2 invokes it with its
 * `event` ({} here), which the jobs ignore: a job works out what is due from the table and the
 * clock, so the handler is the same call `npm run jobs` makes. Each job's entry names its own job
 * and the capabilities it uses, so its bundle carries nothing else (npm run bench). Dependencies
 * are built once per container, at init, like the API's. The run's deadline is the invocation's:
 * a job's dispatcher stops reading and sending before Lambda would cut it off, and leaves the rest
 * due for the next run.
 */
export function scheduledJob(
  name: JobName,
  job: Job,
  capabilities: readonly Capability[] = [],
): (event?: unknown, context?: Context) => Promise<JobResult> {
  // Every job dispatches to its queue's workers (infra/queues.ts); the webhooks job and the outbox
  // sweep too.
  const deps = createDeps(process.env, [workQueue, ...capabilities]);
  return (_event, context) =>
    withLogContext({ source: name, requestId: context?.awsRequestId }, async () => {
      const deadline = context?.getRemainingTimeInMillis ? Date.now() + context.getRemainingTimeInMillis() : undefined;
      // The job bounds its own work by the invocation's end; every table call stops a margin before it.
      const result = await withDeadline(invocationDeadline(context), () => job(deps, new Date(), { deadline }));
      // The run's summary (counts, never record contents) in the function's log.
      log("info", "job run", { ...result });
      return result;
    });
}
