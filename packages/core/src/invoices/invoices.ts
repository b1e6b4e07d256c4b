import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { clientRefWrite, requireClient } from "../clients/clients";
import type { Ctx } from "../context";
import { nowIso } from "../context";
import { commit, type Write } from "../db/commit";
import { nextId } from "../db/ids";
import { clientIndexKeys } from "../db/keys";
import { listEntities, type Page, type PageRequest } from "../db/pagination";
import { assertIfMatch } from "../db/versioning";
import { buildLineItems, computeTotals, type LineItemInput } from "../documents/line-items";
import { DomainError, notFound } from "../errors";
import {
  createInvoiceWrites,
  invoiceKey,
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

export async function findInvoice(ctx: Ctx, id: number, consistent = false): Promise<InvoiceItem | undefined> {
  const out = await ctx.db.doc.send(
    new GetCommand({ TableName: ctx.db.table, Key: invoiceKey(ctx.userId, id), ConsistentRead: consistent }),
  );
  return out.Item as InvoiceItem | undefined;
}

export async function getInvoice(ctx: Ctx, id: number, consistent = false): Promise<InvoiceItem> {
  const item = await findInvoice(ctx, id, consistent);
  if (!item) throw notFound("invoice", id);
  return item;
}

export function listInvoices(
  ctx: Ctx,
  filters: { status?: InvoiceStatus; clientId?: number },
  page: PageRequest,
): Promise<Page<InvoiceItem>> {
  return listEntities<InvoiceItem>(ctx.db, ctx.userId, "INVOICE", filters, page);
}

const notEditable = (item: { id: number; status: string }) =>
  new DomainError("invoice_not_editable", `invoice ${item.id} is ${item.status}; only a draft can be changed`);

/** Whether a patch names at least one field: `{}` changes nothing, not even updatedAt. */
const isEmptyPatch = (patch: object): boolean => Object.values(patch).every((value) => value === undefined);

/**
 * PATCH of a draft. Written whole, conditioned on the version read, so a concurrent change or a
 * finalize in between is never overwritten (412 with If-Match, else the edit is re-applied to
 * the fresh record).
 */
export async function updateInvoice(ctx: Ctx, id: number, patch: InvoicePatch, ifMatch?: string): Promise<InvoiceItem> {
  for (let attempt = 0; ; attempt++) {
    const current = await getInvoice(ctx, id, true);
    assertIfMatch(ifMatch, current.version);
    if (current.status !== "draft") throw notEditable(current);
    if (isEmptyPatch(patch)) return current;

    const next: InvoiceItem = { ...current, updatedAt: nowIso(ctx), version: current.version + 1 };
    const writes: Write[] = [];
    if (patch.clientId !== undefined && patch.clientId !== current.clientId) {
      const client = await requireClient(ctx, patch.clientId);
      Object.assign(next, clientIndexKeys(ctx.userId, "INVOICE", client.id, id), {
        clientId: client.id,
        clientName: client.name,
        clientEmail: client.email ?? null,
      });
      writes.push(clientRefWrite(ctx, client.id, 1), clientRefWrite(ctx, current.clientId, -1));
    }
    for (const field of ["currency", "issueDate", "dueDate", "notes", "terms", "altProcessorPaymentLink"] as const) {
      if (patch[field] !== undefined) (next as unknown as Record<string, unknown>)[field] = patch[field];
    }
    if (patch.lineItems !== undefined) {
      next.lineItems = buildLineItems(patch.lineItems, current.nextLineId);
      next.nextLineId = current.nextLineId + patch.lineItems.length;
      Object.assign(next, computeTotals(next.lineItems));
    }

    let raced = false;
    try {
      await commit(ctx, [
        {
          op: {
            Put: {
              TableName: ctx.db.table,
              Item: next,
              ConditionExpression: "#version = :v",
              ExpressionAttributeNames: { "#version": "version" },
              ExpressionAttributeValues: { ":v": current.version },
            },
          },
          onConditionFailed: (old) => {
            if (!old) return notFound("invoice", id);
            if (old.status !== "draft") return notEditable(old as { id: number; status: string });
            raced = true;
            return new DomainError("precondition_failed", "the invoice was changed concurrently");
          },
        },
        ...writes,
      ], next);
      return next;
    } catch (error) {
      if (!raced || ifMatch !== undefined || attempt >= 5) throw error;
    }
  }
}

/** DELETE of a draft, with its client reference, in one transaction. */
export async function deleteInvoice(ctx: Ctx, id: number): Promise<void> {
  const current = await getInvoice(ctx, id, true);
  if (current.status !== "draft") throw notEditable(current);
  await commit(ctx, [
    {
      op: {
        Delete: {
          TableName: ctx.db.table,
          Key: invoiceKey(ctx.userId, id),
          ConditionExpression: "#status = :draft AND clientId = :client",
          ExpressionAttributeNames: { "#status": "status" },
          ExpressionAttributeValues: { ":draft": "draft", ":client": current.clientId },
        },
      },
      onConditionFailed: (old) => (old ? notEditable(old as { id: number; status: string }) : notFound("invoice", id)),
    },
    clientRefWrite(ctx, current.clientId, -1),
  ]);
}
