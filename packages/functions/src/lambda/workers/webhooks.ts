import { webhooksWorker } from "@invoicing/core/webhooks/webhooks-job";
import { sqsWorker } from "./sqs-worker";

/** The "webhooks" queue's Lambda worker (infra/queues.ts). */
export const handler = sqsWorker("webhooks", webhooksWorker);
