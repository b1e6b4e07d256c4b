import { outboxWorker } from "@invoicing/core/email/outbox";
import { pdfAttachments } from "../../capabilities/pdf-attachments";
import { emailOutbox } from "../../capabilities/email-outbox";
import { sqsWorker } from "./sqs-worker";

/** The "outbox" queue's Lambda worker (infra/queues.ts). */
export const handler = sqsWorker("outbox", outboxWorker, [emailOutbox, pdfAttachments]);
