import type { Deps } from "../deps";
import { findCreditNote } from "../credit-notes/read";
import { loadCreditNoteView } from "./credit-note-view";
import { getInvoice } from "../invoices/invoices";
import { documentAssets } from "./assets";
import type { DocumentView } from "../capabilities/document-view";
import { invoiceAtSend, invoiceDocument, invoiceView } from "../invoices/view";
import type { AttachmentSpec, EmailAttachment } from "../capabilities/email-transport";

/**
 * How an email's attachment (capabilities/email-transport.ts AttachmentSpec) becomes a file: its document's
 * view, drawn by `renderPdf`. Given to the outbox as `Deps.emailAttachments` by what delivers emails.
 */
type AttachmentDeps = Pick<Deps, "db" | "clock" | "renderPdf" | "publicBaseUrl">;

/** The view of the attached document and its file name. */
type Drawing = (
  deps: AttachmentDeps,
  userId: string,
  spec: AttachmentSpec,
) => Promise<{ view: DocumentView; name: string }>;

const DRAWINGS: { [K in AttachmentSpec["kind"]]: Drawing } = {
  invoice_pdf: async (deps, userId, spec) => {
    const { invoiceId, asSent } = spec as Extract<AttachmentSpec, { kind: "invoice_pdf" }>;
    const ctx = { ...deps, userId } as Parameters<typeof getInvoice>[0];
    // As of the send: its email's text states these figures (invoices/emails.ts).
    const invoice = invoiceAtSend(await getInvoice(ctx, invoiceId, true), asSent);
    const view = invoiceView(invoiceDocument(invoice), await documentAssets(deps, userId, invoice), deps);
    return { view, name: invoice.invoiceNumber ?? `invoice-${invoice.id}` };
  },
  credit_note_pdf: async (deps, userId, spec) => {
    const { creditNoteId } = spec as Extract<AttachmentSpec, { kind: "credit_note_pdf" }>;
    const note = await findCreditNote(deps, userId, creditNoteId, true);
    if (!note) throw new Error(`credit note ${creditNoteId} of the email does not exist`);
    return { view: await loadCreditNoteView(deps, userId, note), name: note.creditNoteNumber };
  },
};

export async function attachmentsFor(
  deps: AttachmentDeps,
  item: { userId: string; attachment?: AttachmentSpec },
): Promise<EmailAttachment[]> {
  const spec = item.attachment;
  if (!spec) return [];
  if (!deps.renderPdf) throw new Error("an attachment needs a PDF renderer");
  const { view, name } = await DRAWINGS[spec.kind](deps, item.userId, spec);
  const content = await deps.renderPdf(view, deps.clock());
  return [{ filename: `${name}.pdf`, contentType: "application/pdf", content }];
}
