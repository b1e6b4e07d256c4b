import type { Job, JobResult } from "@invoicing/core/jobs/registry";
import { createBaseDeps, type Capability } from "../../capabilities/base";

/**
 * A scheduled job's Lambda handler (infra/jobs.ts: one CronV2 per job). CronV2 invokes it with its
 * `event` ({} here), which the jobs ignore: a job works out what is due from the table and the
 * clock, so the handler is the same call `npm run jobs` makes. Each job's entry names its own job
 * and the capabilities it uses, so its bundle carries nothing else (npm run bench). Dependencies
 * are built once per container, at init, like the API's.
 */
export function scheduledJob(
  job: Job,
  capabilities: readonly Capability[] = [],
): (event?: unknown) => Promise<JobResult> {
  const deps = createBaseDeps(process.env, capabilities);
  return async () => {
    const result = await job(deps, new Date());
    // The run's summary (counts, never record contents) in the function's log.
    console.log(JSON.stringify(result));
    return result;
  };
}
