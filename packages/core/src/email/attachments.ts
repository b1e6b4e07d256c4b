import type { Deps } from "../context";
import { findCreditNote } from "../credit-notes/read";
import { loadCreditNoteView } from "../public/credit-note-view";
import { getInvoice } from "../invoices/invoices";
import { documentAssets } from "../public/assets";
import type { DocumentView } from "../documents/document-view";
import { invoiceDocument, invoiceView } from "../public/view";
import type { EmailAttachment } from "./transport";

/**
 * What an email carries besides its text: the PDF of the document a `send` sends. Only the reference
 * is stored with the email; the PDF is drawn when the email is delivered, from the document as it is
 * then (an issued invoice's seller, client and amounts are frozen; a credit note never changes), by
 * whoever delivers it with a renderer (the jobs, the stream subscriber, the local server). Each kind
 * names its document and how its view is built; the renderer (`renderPdf`) is the same for all.
 */
export type AttachmentSpec =
  | { kind: "invoice_pdf"; invoiceId: number }
  | { kind: "credit_note_pdf"; creditNoteId: number };

type AttachmentDeps = Pick<Deps, "db" | "clock" | "renderPdf" | "publicBaseUrl">;

/** The view of the attached document and its file name. */
type Drawing = (
  deps: AttachmentDeps,
  userId: string,
  spec: AttachmentSpec,
) => Promise<{ view: DocumentView; name: string }>;

const DRAWINGS: { [K in AttachmentSpec["kind"]]: Drawing } = {
  invoice_pdf: async (deps, userId, spec) => {
    const { invoiceId } = spec as Extract<AttachmentSpec, { kind: "invoice_pdf" }>;
    const ctx = { ...deps, userId } as Parameters<typeof getInvoice>[0];
    const invoice = await getInvoice(ctx, invoiceId, true);
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
