import { runExpireEstimatesJob } from "../estimates/expire-job";
import { runOverdueJob } from "../invoices/overdue-job";
import { runRemindersJob } from "../invoices/reminders-job";
import { runRecurringJob } from "../schedules/recurring-job";
import { runWebhooksJob } from "../webhooks/deliveries";
import type { Job, JobName } from "../job";

/** Every scheduled job by name: a name in JOB_NAMES without its job does not compile. */
export const jobs: Record<JobName, Job> = {
  overdue: runOverdueJob,
  recurring: runRecurringJob,
  reminders: runRemindersJob,
  "expire-estimates": runExpireEstimatesJob,
  webhooks: runWebhooksJob,
};

export { JOB_NAMES, type Job, type JobName, type JobOptions, type JobResult } from "../job";
