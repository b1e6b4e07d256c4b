import { expireEstimatesWorker } from "@invoicing/core/estimates/expire-job";
import { sqsWorker } from "./sqs-worker";

/** The "expire-estimates" queue's Lambda worker (infra/queues.ts). */
export const handler = sqsWorker("expire-estimates", expireEstimatesWorker);
