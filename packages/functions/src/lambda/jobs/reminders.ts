import { runRemindersJob } from "@invoicing/core/invoices/reminders-job";
import { scheduledJob } from "./scheduled";

/**
 * CronV2 "RemindersJob" (infra/jobs.ts). Dispatches the due payment reminders to their queue, and
 * the outbox sweep to the outbox queue: the workers (lambda/workers) send.
 */
export const handler = scheduledJob("reminders", runRemindersJob);
