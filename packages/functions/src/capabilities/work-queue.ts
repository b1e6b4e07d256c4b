import { createSqsWorkQueue } from "@invoicing/core/queue/sqs";
import type { Capability } from "./create-deps";

/**
 * Where the dispatchers and the stream subscriber hand work: the SQS queues linked to the function
 * (infra/queues.ts). None linked (the local stack): nothing here, and the work runs in process
 * (core/src/queue/in-process.ts).
 */
export const workQueue: Capability = (config) =>
  Object.keys(config.workQueueUrls).length > 0
    ? { workQueue: createSqsWorkQueue(config.workQueueUrls, config.region) }
    : {};
