import { runExpireEstimatesJob } from "../estimates/expire-job";
import { runOverdueJob } from "../invoices/overdue-job";
import { runRemindersJob } from "../reminders/reminders-job";
import { runRecurringJob } from "../schedules/recurring-job";
import { runWebhooksJob } from "../webhooks/deliveries";
import type { Job, JobName } from "./registry";

/**
 * Every scheduled job by name. A job not built yet is absent: the command line and the ticker say
 * so instead of pretending it ran.
 */
export const jobs: Partial<Record<JobName, Job>> = {
  overdue: runOverdueJob,
  recurring: runRecurringJob,
  reminders: runRemindersJob,
  "expire-estimates": runExpireEstimatesJob,
  webhooks: runWebhooksJob,
};

export { JOB_NAMES, type Job, type JobName, type JobResult } from "./registry";
