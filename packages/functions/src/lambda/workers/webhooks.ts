import { webhooksWorker } from "@invoicing/core/webhooks/deliveries";
import { sqsWorker } from "./sqs-worker";

/** The "webhooks" queue's Lambda worker (infra/queues.ts). */
export const handler = sqsWorker("webhooks", webhooksWorker);
