import { remindersWorker } from "@invoicing/core/invoices/reminders-job";
import { sqsWorker } from "./sqs-worker";

/** The "reminders" queue's Lambda worker (infra/queues.ts). */
export const handler = sqsWorker("reminders", remindersWorker);
