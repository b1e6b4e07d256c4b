import { attachmentsFor } from "@invoicing/core/public/attachments";
import type { Capability } from "./create-deps";

/**
 * The PDF renderer and the drawing of email attachments with it, for what delivers emails with the
 * document attached: the outbox queue's workers (lambda/workers/outbox.ts) and the local server.
 * pdf-lib is loaded at the first PDF, not at init: most deliveries attach none, and evaluating it is
 * most of what such a function would otherwise do at a cold start. The API function does not carry
 * this capability at all (npm run build shows the sizes); an email it queues with a PDF is
 * delivered by one of these.
 */
export const pdfAttachments: Capability = () => ({
  renderPdf: async (view, now) => (await import("../pdf/document-pdf")).renderDocumentPdf(view, { now }),
  emailAttachments: attachmentsFor,
});
