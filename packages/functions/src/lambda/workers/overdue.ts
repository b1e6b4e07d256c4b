import { overdueWorker } from "@invoicing/core/invoices/overdue-job";
import { sqsWorker } from "./sqs-worker";

/** The "overdue" queue's Lambda worker (infra/queues.ts). */
export const handler = sqsWorker("overdue", overdueWorker);
