import { peppolWorker } from "@invoicing/core/peppol/delivery";
import { peppolHandOver } from "../../capabilities/peppol-hand-over";
import { sqsWorker } from "./sqs-worker";

/** The "peppol" queue's Lambda worker (infra/queues.ts): a send's first hand-over to the access point provider. */
export const handler = sqsWorker("peppol", peppolWorker, [peppolHandOver]);
