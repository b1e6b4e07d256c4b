import { clientRefWrite } from "../clients/clients";
import type { Ctx } from "../context";
import { nowIso } from "../context";
import { commit } from "../db/commit";
import { isTransactionConflict } from "../db/errors";
import { nextId } from "../db/ids";
import { clientIndexKeys } from "../db/keys";
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
import { lastNumber, MAX_NUMBERING_ATTEMPTS, numberingBackoff, takeNumberWrite } from "../documents/numbering";
import { DomainError } from "../errors";
import { newPublicToken } from "../tokens";
import {
  DELETABLE_STATUSES,
  EDITABLE_STATUSES,
  estimateKey,
  estimateStatusKeys,
  formatEstimateNumber,
  syncExpiryKeys,
  type EstimateItem,
  type EstimateStatus,
} from "./model";

/** Estimates: create, read, list, edit, delete. Lifecycle transitions live in lifecycle.ts. */

export interface EstimateInput {
  clientId: number;
  currency?: string;
  validUntil?: string | null;
  notes?: string | null;
  terms?: string | null;
  taxExemptionReason?: string | null;
  lineItems?: LineItemInput[];
}

export type EstimatePatch = Partial<EstimateInput> & DocumentPatch;

const notEditable = (item: { id: number; status: string }) =>
  new DomainError("estimate_not_editable", `estimate ${item.id} is ${item.status}; it cannot be changed or deleted`);

const RULES = { kind: "ESTIMATE", noun: "estimate", notEditable } as const;

const PATCH_RULES: PatchRules<EstimateItem> = {
  ...RULES,
  editable: EDITABLE_STATUSES,
  fields: ["currency", "validUntil", "notes", "terms", "taxExemptionReason"],
  // A sent estimate whose validUntil moves (or is cleared) moves on the expiry list with it.
  derive: syncExpiryKeys,
};

const DELETE_RULES: DeleteRules = { ...RULES, deletable: DELETABLE_STATUSES };

/**
 * A new draft. Its estimateNumber comes from the user's gapless sequence, taken in the same
 * transaction as the Put (see documents/numbering.ts), so numbers follow creation order without gaps.
 */
export async function createEstimate(ctx: Ctx, input: EstimateInput): Promise<EstimateItem> {
  const { client, profile } = await requireParties(ctx, input.clientId);
  const id = await nextId(ctx.db, ctx.userId, "estimate");
  const lines = buildLineItems(input.lineItems ?? [], 1);
  const publicToken = newPublicToken();
  for (let attempt = 1; ; attempt++) {
    const last = await lastNumber(ctx, "estimateNumber");
    const now = nowIso(ctx);
    const item: EstimateItem = {
      ...estimateKey(ctx.userId, id),
      ...estimateStatusKeys(ctx.userId, "draft", id),
      ...clientIndexKeys(ctx.userId, "ESTIMATE", client.id, id),
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
    };
    let taken = false;
    try {
      await commit(ctx, [
        takeNumberWrite(ctx, "estimateNumber", last, () => {
          taken = true;
          return new DomainError("service_unavailable", "estimate numbering is busy; retry");
        }),
        { op: { Put: { TableName: ctx.db.table, Item: item, ConditionExpression: "attribute_not_exists(pk)" } } },
        clientRefWrite(ctx, client.id, 1),
      ], item);
      return item;
    } catch (error) {
      // Creates of one user all take the next number: a lost race (or a conflict) means read again.
      if (!(taken || isTransactionConflict(error)) || attempt >= MAX_NUMBERING_ATTEMPTS) throw error;
      await numberingBackoff(attempt);
    }
  }
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
