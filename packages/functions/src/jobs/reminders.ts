import { withDocumentRenderer } from "../document-deps";
import { scheduledJob } from "./scheduled";

/**
 * CronV2 "RemindersJob" (infra/jobs.ts). Due payment reminders are emailed, each once; its outbox
 * sweep also delivers invoice emails with their PDF, so this job (alone) carries the PDF renderer.
 */
export const handler = scheduledJob("reminders", withDocumentRenderer);
