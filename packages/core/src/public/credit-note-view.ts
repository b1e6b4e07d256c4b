import type { Deps } from "../context";
import type { CreditNoteItem } from "../credit-notes/model";
import type { DocumentView } from "./view";

/**
 * The view a credit note's PDF (and page) is drawn from. NOT BUILT in the credit-note lane: the
 * documents of credit notes (page, PDF, email attachment) are the "cndocs" lane's, which replaces
 * this function. Until then a credit note's email stays undelivered with an error, never a wrong PDF.
 */
export async function creditNoteView(
  _deps: Pick<Deps, "db" | "publicBaseUrl">,
  _userId: string,
  note: CreditNoteItem,
): Promise<DocumentView> {
  throw new Error(`the PDF of credit note ${note.creditNoteNumber} cannot be drawn yet (credit note documents)`);
}
