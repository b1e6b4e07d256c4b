import type { Ctx } from "../deps";
import { nowIso } from "../deps";
import { createTakingValues } from "../db/ids";
import { listEntities, type Page, type PageRequest } from "../db/pagination";
import {
  deleteDocument,
  findDocument,
  getDocument,
  patchDocument,
  type DeleteRules,
  type PatchRules,
} from "../documents/editing";
import { buildLineItems, type LineItemInput } from "../documents/line-items";
import { requireParties } from "../documents/parties";
import { DomainError } from "../errors";
import { createInvoiceWrites, newDraftInvoice, type DraftFields, type InvoiceItem, type InvoiceStatus } from "./model";

/** Draft invoices: create, read, list, edit, delete. Lifecycle transitions live in lifecycle.ts. */

interface InvoiceInput extends Omit<DraftFields, "recurringScheduleId" | "estimateId"> {
  clientId: number;
  lineItems?: LineItemInput[];
}

type InvoicePatch = Partial<Omit<InvoiceInput, "lineItems" | "currency">> & {
  currency?: string;
  lineItems?: LineItemInput[];
};

/**
 * A new draft: one read and one transaction. The read fetches the client (its name, email and
 * currency are copied onto the draft) and the id counter together — on a request's first read, with
 * the API key too (keys/authorized-db.ts) — and the transaction takes the id, puts the invoice and
 * counts the client's reference on the condition that the client still exists (a client deleted
 * meanwhile is 422 client_not_found from the cancellation reason).
 */
export async function createInvoice(ctx: Ctx, input: InvoiceInput): Promise<InvoiceItem> {
  const lines = buildLineItems(input.lineItems ?? [], 1);
  return createTakingValues(ctx, "invoice id counter", async (_take, takeId) => {
    const [{ client, profile }, id] = await Promise.all([requireParties(ctx, input.clientId), takeId("invoice")]);
    // Absent notes and terms take the profile's defaults; an explicit null stays null.
    const fields = {
      ...input,
      notes: input.notes === undefined ? profile.defaultNotes : input.notes,
      terms: input.terms === undefined ? profile.defaultTerms : input.terms,
    };
    const item = newDraftInvoice(ctx, id, client, lines, fields, nowIso(ctx));
    return { writes: createInvoiceWrites(ctx, item), result: item };
  });
}

export function findInvoice(ctx: Ctx, id: number, consistent = false): Promise<InvoiceItem | undefined> {
  return findDocument<InvoiceItem>(ctx, "INVOICE", id, consistent);
}

export function getInvoice(ctx: Ctx, id: number, consistent = false): Promise<InvoiceItem> {
  return getDocument<InvoiceItem>(ctx, RULES, id, consistent);
}

export function listInvoices(
  ctx: Ctx,
  filters: { status?: InvoiceStatus; clientId?: number },
  page: PageRequest,
): Promise<Page<InvoiceItem>> {
  return listEntities<InvoiceItem>(ctx.db, ctx.userId, "INVOICE", filters, page);
}

const notEditable = (item: { id: number; status: string }) =>
  new DomainError(
    "invoice_not_editable",
    `invoice ${item.id} is ${item.status}; only a draft can be changed or deleted`,
  );

const RULES = { kind: "INVOICE", noun: "invoice", notEditable } as const;

/** Only a draft is edited or deleted. */
const DRAFT_ONLY: readonly InvoiceStatus[] = ["draft"];

const PATCH_RULES: PatchRules<InvoiceItem> = {
  ...RULES,
  editable: DRAFT_ONLY,
  // `currency` stays as it is when clientId changes: only clientName/clientEmail follow the client.
  fields: [
    "currency",
    "issueDate",
    "dueDate",
    "notes",
    "terms",
    "altProcessorPaymentLink",
    "taxExemptionReason",
    "buyerReference",
    "purchaseOrderReference",
    "deliveryDate",
  ],
};

const DELETE_RULES: DeleteRules = { ...RULES, deletable: DRAFT_ONLY };

/**
 * PATCH of a draft (documents/editing.ts, the rules invoices and estimates share): written whole,
 * conditioned on the version read, so a concurrent change or a finalize in between is never
 * overwritten (412 with If-Match, else the edit is re-applied to the fresh record); `{}` writes
 * nothing; new lines get ids above any the invoice had.
 */
export const updateInvoice = (ctx: Ctx, id: number, patch: InvoicePatch, ifMatch?: string): Promise<InvoiceItem> =>
  patchDocument(ctx, PATCH_RULES, id, patch, ifMatch);

/** DELETE of a draft, with its client reference, in one transaction. */
export const deleteInvoice = (ctx: Ctx, id: number): Promise<void> => deleteDocument(ctx, DELETE_RULES, id);
