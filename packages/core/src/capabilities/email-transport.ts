/**
 * The outbox's delivery side: one interface, two backends. `ses-transport.ts` hands a message to
 * Amazon SES (deployed); `file-transport.ts` writes it as an RFC 5322 `.eml` file under
 * `<DATA_DIR>/outbox/` (local). functions/src/capabilities/email-outbox.ts picks one; core only sees this interface, as
 * the `outbox` capability of Deps.
 */

/** One email to one recipient, as the outbox stores it and a transport delivers it. */
export interface EmailMessage {
  /** Unique and sortable (creation time first): the Message-ID's left part and the .eml file name. */
  id: string;
  to: string;
  subject: string;
  text: string;
  /** The same content as HTML (inline styles, tables, no external assets); with `text` a multipart/alternative. */
  html?: string;
  /** The From display name (the business's name); the address stays the service's sender. */
  fromName?: string | null;
  /** Where replies go (the business's email), instead of the sender's own reply-to. */
  replyTo?: string | null;
  /** ISO time the message was queued: its Date header. */
  createdAt: string;
  /** The user it is sent for: with `id`, what a bounce report leads back to (email/bounces.ts). */
  userId?: string;
  /** Files sent along (the invoice PDF), rendered by the deliverer, never stored (AttachmentSpec). */
  attachments?: EmailAttachment[];
}

export interface EmailAttachment {
  filename: string;
  contentType: string;
  content: Uint8Array;
}

/** Who emails come from, configured per deployment (never per request). */
export interface EmailSender {
  /** An address, optionally with a display name: `Billing <billing@example.com>`. */
  from: string;
  replyTo?: string;
}

export interface DeliveryReceipt {
  /** The provider's id for the message (SES MessageId, or the file name written). */
  providerMessageId?: string;
}

export interface EmailTransport {
  readonly kind: "ses" | "file";
  /** Hands the message over; throws when it could not. */
  deliver(message: EmailMessage): Promise<DeliveryReceipt>;
}

/**
 * What an email carries besides its text: the PDF of the document a `send` sends. Only the reference
 * is stored with the email; the PDF is drawn when the email is delivered, by whoever delivers it with
 * a renderer (the jobs, the stream subscriber, the local server), AS OF THE SEND: an issued invoice's
 * seller, client, lines and total are frozen, and what may still change (InvoiceAsSent) is stored
 * with the email as the send saw it; a credit note never changes. So the PDF states the figures the
 * email's text states (docs/documents.md "Where PDFs are drawn"). Each kind names its document and
 * how its view is built (public/attachments.ts); the renderer (`renderPdf`) is the same for all.
 */
export type AttachmentSpec =
  | { kind: "invoice_pdf"; invoiceId: number; asSent?: InvoiceAsSent }
  | { kind: "credit_note_pdf"; creditNoteId: number };

/**
 * What of an issued invoice may change after its send — payments, credit notes, void, overdue — as
 * it was at the send (invoices/view.ts invoiceAsSent). Absent on emails queued before it was stored:
 * those are drawn as the invoice is at delivery.
 */
export interface InvoiceAsSent {
  status: string;
  amountPaid: string;
  creditedAmount: string;
  creditNoteNumbers: string[];
  paidAt: string | null;
  voidedAt: string | null;
}
