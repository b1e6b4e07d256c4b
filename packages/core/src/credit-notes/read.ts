import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { Ctx, Deps } from "../deps";
import { batchGet, batchKey } from "../db/batch-get";
import { pad } from "../db/keys";
import { listEntities, listPage, type Page, type PageRequest } from "../db/pagination";
import { notFound } from "../errors";
import { invoiceKey, type InvoiceItem } from "../invoices/model";
import { toResource } from "../resource";
import { type CreditNoteItem, creditNoteKey, creditNotesOfInvoicePartition } from "./model";
import { CreditNote } from "./resource";

/**
 * Reading credit notes (API.md section 17): by id, the lists, and the public shape. Apart from
 * issuing and sending (credit-notes.ts), so that what draws a credit note (documents, the email
 * attachment, events) reads it without depending on the send that queues its email.
 */
export const toCreditNote = (item: CreditNoteItem): CreditNote => toResource(item, CreditNote);

/** A credit note of the user, or undefined (another user's id reads as a missing one: the key holds the user). */
export async function findCreditNote(
  deps: Pick<Deps, "db">,
  userId: string,
  id: number,
  consistent = false,
): Promise<CreditNoteItem | undefined> {
  const out = await deps.db.doc.send(
    new GetCommand({ TableName: deps.db.table, Key: creditNoteKey(userId, id), ConsistentRead: consistent }),
  );
  return out.Item as CreditNoteItem | undefined;
}

/** GET /credit-notes/{id}: the credit note, or 404. */
export async function getCreditNote(ctx: Ctx, id: number, consistent = false): Promise<CreditNoteItem> {
  const item = await findCreditNote(ctx, ctx.userId, id, consistent);
  if (!item) throw notFound("credit note", id);
  return item;
}

/**
 * GET /credit-notes?invoiceId=&clientId=: newest first. An invoice's (and, with clientId too, only
 * if it is that client's) from its byStatus partition, a client's from byClient, all of them from the
 * user's partition (credit-notes/model.ts).
 */
export function listCreditNotes(
  ctx: Ctx,
  filters: { invoiceId?: number; clientId?: number },
  page: PageRequest,
): Promise<Page<CreditNoteItem>> {
  if (filters.invoiceId === undefined) {
    return listEntities<CreditNoteItem>(ctx.db, ctx.userId, "CREDITNOTE", { clientId: filters.clientId }, page);
  }
  const partition = creditNotesOfInvoicePartition(ctx.userId, filters.invoiceId);
  return listPage<CreditNoteItem>(
    ctx.db,
    {
      index: "byStatus",
      partitionName: "gsi1pk",
      partitionValue: partition,
      filters: filters.clientId === undefined ? undefined : { clientId: filters.clientId },
      signature: `${ctx.userId}|CREDITNOTE|invoice:${filters.invoiceId}|${filters.clientId ?? ""}`,
      startKey: (id) => ({ ...creditNoteKey(ctx.userId, id), gsi1pk: partition, gsi1sk: pad(id) }),
    },
    page,
  );
}

/**
 * GET /invoices/{id}/credit-notes: oldest first, not paginated. Read by the numbers the invoice
 * holds (its id is its number), consistently: a credit note just issued is listed at once, which
 * the lagging index could not promise.
 */
export async function listInvoiceCreditNotes(ctx: Ctx, invoiceId: number): Promise<CreditNoteItem[]> {
  const out = await ctx.db.doc.send(
    new GetCommand({ TableName: ctx.db.table, Key: invoiceKey(ctx.userId, invoiceId), ConsistentRead: true }),
  );
  const invoice = out.Item as InvoiceItem | undefined;
  if (!invoice) throw notFound("invoice", invoiceId);
  const ids = (invoice.creditNoteNumbers ?? []).map((number) => Number(number.slice("CN-".length)));
  const notes: CreditNoteItem[] = [];
  for (let start = 0; start < ids.length; start += 100) {
    const keys = ids.slice(start, start + 100).map((id) => creditNoteKey(ctx.userId, id));
    const found = await batchGet(ctx.db, keys);
    for (const key of keys) {
      const item = found.get(batchKey(key));
      if (item) notes.push(item as unknown as CreditNoteItem);
    }
  }
  return notes;
}
