import { checkoutExpiryWorker } from "@invoicing/core/payments/checkout";
import { cardProcessor } from "../../capabilities/card-processor";
import { sqsWorker } from "./sqs-worker";

/** The "checkout-expiry" queue's Lambda worker (infra/queues.ts). */
export const handler = sqsWorker("checkout-expiry", checkoutExpiryWorker, [cardProcessor]);
