import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { clientRefWrite, requireClient } from "../clients/clients";
import type { Ctx } from "../deps";
import { nowIso } from "../deps";
import { commit, type Write } from "../db/commit";
import { entityKey } from "../db/keys";
import { optimistic, Raced } from "../db/optimistic";
import { assertIfMatch, isEmptyPatch, putIfVersion } from "../db/versioning";
import { type DomainError, notFound } from "../errors";
import { buildLineItems, computeTotals, type LineItemInput } from "./line-items";
import type { DocumentItem } from "./item";
import { clientCopies } from "./parties";

/**
 * Reading, editing and deleting invoices and estimates: one implementation of the rules both
 * documents follow ("same rules as invoices"). Each kind passes its own
 * statuses, fields and errors; nothing here knows which document it edits.
 */
/** A credit note is never edited or deleted: it is read (and sent) through here only. */
type DocumentKind = "INVOICE" | "ESTIMATE" | "CREDITNOTE";

export interface DocumentRules {
  kind: DocumentKind;
  /** "invoice", "estimate": how errors name the document. */
  noun: string;
  /** The error for a document in a status that does not allow the change. */
  notEditable: (item: { id: number; status: string }) => DomainError;
}

export async function findDocument<T>(
  ctx: Ctx,
  kind: DocumentKind,
  id: number,
  consistent = false,
): Promise<T | undefined> {
  const out = await ctx.db.doc.send(
    new GetCommand({ TableName: ctx.db.table, Key: entityKey(ctx.userId, kind, id), ConsistentRead: consistent }),
  );
  return out.Item as T | undefined;
}

/** The document, or 404 (another user's id reads exactly as a missing one: the key holds the user). */
export async function getDocument<T>(
  ctx: Ctx,
  rules: Pick<DocumentRules, "kind" | "noun">,
  id: number,
  consistent = false,
): Promise<T> {
  const item = await findDocument<T>(ctx, rules.kind, id, consistent);
  if (!item) throw notFound(rules.noun, id);
  return item;
}

/** The fields every document's PATCH may carry besides its own plain fields. */
export interface DocumentPatch {
  clientId?: number;
  lineItems?: LineItemInput[];
}

export interface PatchRules<T extends DocumentItem> extends DocumentRules {
  /** The statuses a PATCH applies in; any other is `notEditable`. */
  editable: readonly string[];
  /** Fields taken from the patch as given (`null` clears a nullable one). */
  fields: readonly (keyof T & string)[];
}

/**
 * PATCH: the record is written whole, conditioned on the version read, so a concurrent change or a
 * transition in between is never overwritten. With If-Match a lost race is 412; without, the edit is
 * re-applied to the fresh record (or refused if the record left the editable statuses). A new
 * `clientId` refreshes the client copies (name, email, address, tax id) and moves the client reference in the same transaction.
 */
export async function patchDocument<T extends DocumentItem>(
  ctx: Ctx,
  rules: PatchRules<T>,
  id: number,
  patch: DocumentPatch,
  ifMatch?: string,
): Promise<T> {
  return optimistic(
    rules.noun,
    async () => {
      const current = await getDocument<T>(ctx, rules, id, true);
      assertIfMatch(ifMatch, current.version);
      if (!rules.editable.includes(current.status)) throw rules.notEditable(current);
      if (isEmptyPatch(patch)) return current;

      const next: T = { ...current, updatedAt: nowIso(ctx), version: current.version + 1 };
      const writes: Write[] = [];
      if (patch.clientId !== undefined && patch.clientId !== current.clientId) {
        const client = await requireClient(ctx, patch.clientId);
        // Its byClient entry follows from clientId when written (putIfVersion).
        Object.assign(next, { clientId: client.id, ...clientCopies(client) });
        writes.push(clientRefWrite(ctx, client.id, 1), clientRefWrite(ctx, current.clientId, -1));
      }
      const given = patch as Record<string, unknown>;
      for (const field of rules.fields) {
        if (given[field] !== undefined) (next as Record<string, unknown>)[field] = given[field];
      }
      if (patch.lineItems !== undefined) {
        next.lineItems = buildLineItems(patch.lineItems, current.nextLineId);
        next.nextLineId = current.nextLineId + patch.lineItems.length;
        Object.assign(next, computeTotals(next.lineItems));
      }

      await commit(
        ctx,
        [
          {
            op: putIfVersion(ctx.db.table, next, current.version),
            onConditionFailed: (old) => {
              if (!old) return notFound(rules.noun, id);
              if (!rules.editable.includes(old.status as string))
                return rules.notEditable(old as { id: number; status: string });
              return new Raced(); // with If-Match a 412, without re-applied to the fresh record
            },
          },
          ...writes,
        ],
        next,
      );
      return next;
    },
    { ifMatch },
  );
}

export interface DeleteRules extends DocumentRules {
  /** The statuses a DELETE applies in; any other is `notEditable`. */
  deletable: readonly string[];
}

/**
 * DELETE, with the client reference released in the same transaction. Conditioned on the status and
 * on the client read, so the count stays exact when a PATCH moves the document to another client
 * meanwhile (then it is read again and retried).
 */
export async function deleteDocument(ctx: Ctx, rules: DeleteRules, id: number): Promise<void> {
  await optimistic(rules.noun, async () => {
    const current = await getDocument<DocumentItem>(ctx, rules, id, true);
    if (!rules.deletable.includes(current.status)) throw rules.notEditable(current);
    const names: Record<string, string> = { "#status": "status" };
    const values: Record<string, unknown> = { ":client": current.clientId };
    const allowed = rules.deletable.map((status, i) => {
      values[`:s${i}`] = status;
      return `:s${i}`;
    });
    await commit(ctx, [
      {
        op: {
          Delete: {
            TableName: ctx.db.table,
            Key: entityKey(ctx.userId, rules.kind, id),
            ConditionExpression: `#status IN (${allowed.join(", ")}) AND clientId = :client`,
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
          },
        },
        onConditionFailed: (old) => {
          if (!old) return notFound(rules.noun, id);
          if (!rules.deletable.includes(old.status as string))
            return rules.notEditable(old as { id: number; status: string });
          return new Raced(); // moved to another client meanwhile: read again
        },
      },
      clientRefWrite(ctx, current.clientId, -1),
    ]);
  });
}
