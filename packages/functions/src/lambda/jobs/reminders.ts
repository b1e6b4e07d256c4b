import { runRemindersJob } from "@invoicing/core/invoices/reminders-job";
import { emailOutbox } from "../../capabilities/email";
import { documentRenderer } from "../../capabilities/document-deps";
import { scheduledJob } from "./scheduled";

/** CronV2 "RemindersJob" (infra/jobs.ts). Due payment reminders are emailed, each once. */
export const handler = scheduledJob("reminders", runRemindersJob, [emailOutbox, documentRenderer]);
