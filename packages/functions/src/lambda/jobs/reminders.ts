import { scheduledJob } from "./scheduled";

/** CronV2 "RemindersJob" (infra/jobs.ts). Due payment reminders are emailed, each once. */
export const handler = scheduledJob("reminders");
