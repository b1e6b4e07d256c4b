import type { Deps } from "./deps";

/**
 * The scheduled jobs, in the order `jobs all` runs them. Each is one core function that the CronV2
 * Lambda handlers (functions/src/lambda/jobs), the `jobs` command line and the local ticker all call.
 * A job reads only what is due (the byDue index) and is safe to run twice or concurrently.
 */
export interface JobResult {
  job: JobName;
  now: string;
  /** Records changed by this run. */
  changed: number;
  [detail: string]: unknown;
}

export const JOB_NAMES = ["overdue", "recurring", "reminders", "expire-estimates", "webhooks", "peppol"] as const;
export type JobName = (typeof JOB_NAMES)[number];

/** How a run is bounded: `deadline` (epoch ms, wall clock) is when the run must be over. */
export interface JobOptions {
  deadline?: number;
}

export type Job = (deps: Deps, now: Date, options?: JobOptions) => Promise<JobResult>;
