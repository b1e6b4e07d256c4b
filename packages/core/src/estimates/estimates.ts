import { clientRefWrite } from "../clients/clients";
import type { Ctx } from "../deps";
import { nowIso } from "../deps";
import { createTakingValues } from "../db/ids";
import { indexed } from "../db/keys";
import { listEntities, type Page, type PageRequest } from "../db/pagination";
import {
  deleteDocument,
  getDocument,
  patchDocument,
  type DeleteRules,
  type DocumentPatch,
  type PatchRules,
} from "../documents/editing";
import { buildLineItems, computeTotals, nextLineId, type LineItemInput } from "../documents/line-items";
import { clientCopies, requireParties } from "../documents/parties";
import { lastNumber } from "../documents/numbering";
import { DomainError } from "../errors";
import { newPublicToken } from "../tokens";
import {
  DELETABLE_STATUSES,
  EDITABLE_STATUSES,
  estimateKey,
  formatEstimateNumber,
  type EstimateItem,
  type EstimateStatus,
} from "./model";

/** Estimates: create, read, list, edit, delete. Lifecycle transitions live in lifecycle.ts. */

interface EstimateInput {
  clientId: number;
  currency?: string;
  validUntil?: string | null;
  notes?: string | null;
  terms?: string | null;
  taxExemptionReason?: string | null;
  lineItems?: LineItemInput[];
}

type EstimatePatch = Partial<EstimateInput> & DocumentPatch;

const notEditable = (item: { id: number; status: string }) =>
  new DomainError("estimate_not_editable", `estimate ${item.id} is ${item.status}; it cannot be changed or deleted`);

const RULES = { kind: "ESTIMATE", noun: "estimate", notEditable } as const;

const PATCH_RULES: PatchRules<EstimateItem> = {
  ...RULES,
  editable: EDITABLE_STATUSES,
  // A sent estimate whose validUntil moves (or is cleared) moves on the expiry list with it: the
  // index attributes follow from the item written (db/keys.ts withIndexKeys).
  fields: ["currency", "validUntil", "notes", "terms", "taxExemptionReason"],
};

const DELETE_RULES: DeleteRules = { ...RULES, deletable: DELETABLE_STATUSES };

/**
 * A new draft: one read and one transaction. Its estimateNumber comes from the user's gapless
 * sequence and its id from the id counter, both taken in the same transaction as the Put (see
 * documents/numbering.ts, db/ids.ts), so numbers follow creation order without gaps. The read
 * fetches the client (copied onto the draft) and both counters together — on a request's first
 * read, with the API key too — and the transaction's condition on the client proves it still exists.
 */
export async function createEstimate(ctx: Ctx, input: EstimateInput): Promise<EstimateItem> {
  const lines = buildLineItems(input.lineItems ?? [], 1);
  const publicToken = newPublicToken();
  return createTakingValues(ctx, "estimate counters", async (take, takeId) => {
    const [{ client, profile }, id, last] = await Promise.all([
      requireParties(ctx, input.clientId),
      takeId("estimate"),
      lastNumber(ctx, "estimateNumber"),
    ]);
    const now = nowIso(ctx);
    const item = indexed<EstimateItem>({
      ...estimateKey(ctx.userId, id),
      kind: "estimate",
      userId: ctx.userId,
      version: 1,
      id,
      clientId: client.id,
      estimateNumber: formatEstimateNumber(last + 1),
      status: "draft",
      currency: input.currency ?? client.currency,
      ...computeTotals(lines),
      // Absent notes and terms take the profile's defaults; an explicit null stays null.
      notes: input.notes === undefined ? profile.defaultNotes : input.notes,
      terms: input.terms === undefined ? profile.defaultTerms : input.terms,
      validUntil: input.validUntil ?? null,
      convertedInvoiceId: null,
      ...clientCopies(client),
      taxExemptionReason: input.taxExemptionReason ?? null,
      seller: null,
      lineItems: lines,
      nextLineId: nextLineId(lines),
      publicToken,
      recipient: null,
      sentAt: null,
      createdAt: now,
      updatedAt: now,
    });
    const writes = [
      take("estimateNumber", last),
      { op: { Put: { TableName: ctx.db.table, Item: item, ConditionExpression: "attribute_not_exists(pk)" } } },
      clientRefWrite(ctx, client.id, 1),
    ];
    return { writes, result: item };
  });
}

export const getEstimate = (ctx: Ctx, id: number, consistent = false): Promise<EstimateItem> =>
  getDocument<EstimateItem>(ctx, RULES, id, consistent);

export function listEstimates(
  ctx: Ctx,
  filters: { status?: EstimateStatus; clientId?: number },
  page: PageRequest,
): Promise<Page<EstimateItem>> {
  return listEntities<EstimateItem>(ctx.db, ctx.userId, "ESTIMATE", filters, page);
}

/** PATCH of a draft or sent estimate: the same rules as an invoice's (documents/editing.ts). */
export const updateEstimate = (ctx: Ctx, id: number, patch: EstimatePatch, ifMatch?: string): Promise<EstimateItem> =>
  patchDocument(ctx, PATCH_RULES, id, patch, ifMatch);

/** DELETE, except of an accepted or converted estimate (the client's yes, an invoice, hang on it). */
export const deleteEstimate = (ctx: Ctx, id: number): Promise<void> => deleteDocument(ctx, DELETE_RULES, id);
