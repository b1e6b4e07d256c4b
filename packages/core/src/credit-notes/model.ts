import { pad, userPk } from "../db/keys";
import type { CreditNote } from "./resource";

/**
 * The stored credit note (docs/credit-notes.md). The shared contract of the credit-note lanes:
 * - item: pk USER#<userId>, sk CREDITNOTE#<10-digit id>, `type: "credit_note"`; every resource field
 *   stored as returned (money as two-decimal strings, lines with their amounts), so the stream's
 *   NEW_IMAGE of an INSERT is the whole credit note; `taxBreakdown` is stored too (a credit note
 *   never changes, so it is computed once);
 * - the credit note is written (INSERT, never modified except `sentAt`/`version` by send) in ONE
 *   transaction with its invoice's new `creditedAmount`, status and `voidedAt`/paid fields and the
 *   CN number counter (COUNTER#creditNoteNumber);
 * - the invoice item gains `creditedAmount` (two-decimal string; absent on items written before:
 *   read as "0.00"), `voidedAt` (ISO time or null/absent) and `creditNoteNumbers` (string[] of its
 *   credit notes' numbers, in issue order; absent = none), which its documents print.
 */
export interface CreditNoteItem extends CreditNote {
  pk: string;
  sk: string;
  type: "credit_note";
  userId: string;
  version: number;
  /** Byinvoice list: gsi1pk = USER#<u>#CREDITNOTE#INVOICE#<invoiceId>, gsi1sk = padded id. */
  gsi1pk: string;
  gsi1sk: string;
  /** byClient list: gsi2pk = USER#<u>#CREDITNOTE#CLIENT#<clientId>, gsi2sk = padded id. */
  gsi2pk: string;
  gsi2sk: string;
  /** The Peppol participant it was delivered to (documents/view.ts PeppolSent); internal. */
  peppolDeliveredTo?: string;
}

const CREDIT_NOTE_PREFIX = "CREDITNOTE#";
export const creditNoteKey = (userId: string, id: number) => ({
  pk: userPk(userId),
  sk: `${CREDIT_NOTE_PREFIX}${pad(id)}`,
});
export const creditNotesOfInvoicePartition = (userId: string, invoiceId: number): string =>
  `${userPk(userId)}#CREDITNOTE#INVOICE#${invoiceId}`;
export const creditNotesOfClientPartition = (userId: string, clientId: number): string =>
  `${userPk(userId)}#CREDITNOTE#CLIENT#${clientId}`;
