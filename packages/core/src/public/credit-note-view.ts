import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { Deps } from "../deps";
import type { CreditNoteItem } from "../credit-notes/model";
import type { CreditNote } from "../credit-notes/resource";
import { toCreditNote } from "../credit-notes/read";
import { invoiceKey, type InvoiceItem } from "../invoices/model";
import { documentAssets } from "./assets";
import type { DocumentView } from "../capabilities/document-view";
import { creditNoteView } from "../credit-notes/view";
import type { DocumentAssets, PeppolSent } from "../documents/view";

/**
 * What a credit note's documents (page, PDF, email attachment, e-invoice) are drawn from: the credit
 * note, the invoice it corrects (its issue date for "Credit note for invoice INV-000001 of …", and
 * for the e-invoice its buyer reference, order and date of supply) and the seller's assets (the
 * snapshot on the credit note, the current logo). The invoice and the logo are read in parallel: one
 * round trip's wait. An issued invoice is never deleted, so a credit note always finds its own.
 */
interface CreditNoteDocument {
  creditNote: CreditNote & PeppolSent;
  invoice: InvoiceItem;
  assets: DocumentAssets;
}

export async function creditNoteDocument(
  deps: Pick<Deps, "db">,
  userId: string,
  note: CreditNoteItem,
): Promise<CreditNoteDocument> {
  const [found, assets] = await Promise.all([
    deps.db.doc.send(new GetCommand({ TableName: deps.db.table, Key: invoiceKey(userId, note.invoiceId) })),
    documentAssets(deps, userId, note),
  ]);
  const invoice = found.Item as InvoiceItem | undefined;
  if (!invoice) throw new Error(`credit note ${note.creditNoteNumber}: its invoice ${note.invoiceId} does not exist`);
  return {
    creditNote: { ...toCreditNote(note), peppolDeliveredTo: note.peppolDeliveredTo ?? null },
    invoice,
    assets,
  };
}

/** The view a credit note's page and PDF render (credit-notes/view.ts creditNoteView), read from the table. */
export async function loadCreditNoteView(
  deps: Pick<Deps, "db">,
  userId: string,
  note: CreditNoteItem,
): Promise<DocumentView> {
  const { creditNote, invoice, assets } = await creditNoteDocument(deps, userId, note);
  return creditNoteView(creditNote, invoice.issueDate, assets);
}
