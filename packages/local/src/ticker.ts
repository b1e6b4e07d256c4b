import type { Deps } from "@invoicing/core/deps";
import { JOB_NAMES, jobs, type JobName, type JobResult } from "@invoicing/core/jobs/all";

/** Runs the named jobs once, in order, as of `now`. An unknown name is reported, not faked. */
export async function runJobs(
  deps: Deps,
  names: readonly string[],
  now: Date,
): Promise<(JobResult | { job: string; error: string })[]> {
  const results: (JobResult | { job: string; error: string })[] = [];
  for (const name of names) {
    const job = (JOB_NAMES as readonly string[]).includes(name) ? jobs[name as JobName] : undefined;
    if (!job) results.push({ job: name, error: `no such job; the jobs are ${JOB_NAMES.join(", ")}` });
    else results.push(await job(deps, now));
  }
  return results;
}

/** The local stand-in for EventBridge: every job, every `intervalSeconds`, never two ticks at once. */
export function startTicker(deps: Deps, intervalSeconds: number, log: (line: string) => void): () => Promise<void> {
  if (intervalSeconds <= 0) return async () => {};
  let running: Promise<unknown> | undefined;
  const tick = () => {
    if (running) return;
    running = runJobs(deps, JOB_NAMES, new Date())
      .then((results) => {
        for (const r of results) if ("changed" in r && r.changed > 0) log(JSON.stringify(r));
      })
      .catch((error: unknown) => log(`job tick failed: ${error instanceof Error ? error.message : String(error)}`))
      .finally(() => (running = undefined));
  };
  const timer = setInterval(tick, intervalSeconds * 1000);
  return async () => {
    clearInterval(timer);
    await running;
  };
}
