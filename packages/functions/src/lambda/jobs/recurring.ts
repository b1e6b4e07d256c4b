import { runRecurringJob } from "@invoicing/core/schedules/recurring-job";
import { scheduledJob } from "./scheduled";

/** CronV2 "RecurringJob" (infra/jobs.ts). Recurring schedules generate (and auto-send) every invoice due by now. */
export const handler = scheduledJob("recurring", runRecurringJob);
