import { checkoutExpiryWorker } from "@invoicing/core/public/checkout";
import { cardProcessor } from "../../capabilities/card-processor";
import { sqsWorker } from "./sqs-worker";

/** The "checkout-expiry" queue's Lambda worker (infra/queues.ts). */
export const handler = sqsWorker("checkout-expiry", checkoutExpiryWorker, [cardProcessor]);
