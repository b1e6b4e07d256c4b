import type { Deps } from "../context";

/**
 * The scheduled jobs, in the order `jobs all` runs them. Each is one core function that the CronV2
 * Lambda handlers (functions/src/jobs), the `jobs` command line and the local ticker all call.
 * A job reads only what is due (the byDue index) and is safe to run twice or concurrently.
 */
export interface JobResult {
  job: JobName;
  now: string;
  /** Records changed by this run. */
  changed: number;
  [detail: string]: unknown;
}

export type JobName = "overdue" | "recurring" | "reminders" | "expire-estimates" | "webhooks";
export const JOB_NAMES: readonly JobName[] = ["overdue", "recurring", "reminders", "expire-estimates", "webhooks"];

export type Job = (deps: Deps, now: Date) => Promise<JobResult>;
