import { requireClient } from "../clients/clients";
import type { Ctx } from "../context";
import { nowIso } from "../context";
import { commit } from "../db/commit";
import { nextId } from "../db/ids";
import { listEntities, type Page, type PageRequest } from "../db/pagination";
import { deleteDocument, findDocument, getDocument, patchDocument, type DeleteRules, type PatchRules } from "../documents/editing";
import { buildLineItems, type LineItemInput } from "../documents/line-items";
import { DomainError } from "../errors";
import {
  createInvoiceWrites,
  newDraftInvoice,
  type DraftFields,
  type InvoiceItem,
  type InvoiceStatus,
} from "./model";

/** Draft invoices: create, read, list, edit, delete. Lifecycle transitions live in lifecycle.ts. */

export interface InvoiceInput extends Omit<DraftFields, "recurringScheduleId" | "estimateId"> {
  clientId: number;
  lineItems?: LineItemInput[];
}

export type InvoicePatch = Partial<Omit<InvoiceInput, "lineItems" | "currency">> & {
  currency?: string;
  lineItems?: LineItemInput[];
};

export async function createInvoice(ctx: Ctx, input: InvoiceInput): Promise<InvoiceItem> {
  const client = await requireClient(ctx, input.clientId);
  const id = await nextId(ctx.db, ctx.userId, "invoice");
  const item = newDraftInvoice(ctx, id, client, buildLineItems(input.lineItems ?? [], 1), input, nowIso(ctx));
  await commit(ctx, createInvoiceWrites(ctx, item), item);
  return item;
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
  new DomainError("invoice_not_editable", `invoice ${item.id} is ${item.status}; only a draft can be changed or deleted`);

const RULES = { kind: "INVOICE", noun: "invoice", notEditable } as const;

/** Only a draft is edited or deleted. */
const DRAFT_ONLY: readonly InvoiceStatus[] = ["draft"];

const PATCH_RULES: PatchRules<InvoiceItem> = {
  ...RULES,
  editable: DRAFT_ONLY,
  // `currency` stays as it is when clientId changes: only clientName/clientEmail follow the client.
  fields: ["currency", "issueDate", "dueDate", "notes", "terms", "altProcessorPaymentLink"],
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
