import { recurringWorker } from "@invoicing/core/schedules/recurring-job";
import { sqsWorker } from "./sqs-worker";

/** The "recurring" queue's Lambda worker (infra/queues.ts). */
export const handler = sqsWorker("recurring", recurringWorker);
