import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { Ctx } from "../context";
import type { Write } from "../db/commit";
import { counterKey } from "../db/keys";

/**
 * Gapless per-user document numbers (INV-000001 at finalize, EST-000001 at creation). The counter
 * is not bumped on its own (that would leave a gap when the document's write fails): the caller
 * reads the last number, and its transaction both writes the document and moves the counter from
 * that value to the next, conditioned on the value read. Losing a race means read again and retry.
 */
export type NumberPrefix = "INV" | "EST";
export type NumberCounter = "invoiceNumber" | "estimateNumber";

export const formatDocumentNumber = (prefix: NumberPrefix, n: number): string => `${prefix}-${String(n).padStart(6, "0")}`;

/** The last number a user's sequence gave out (0 before the first). */
export async function lastNumber(ctx: Ctx, counter: NumberCounter): Promise<number> {
  const out = await ctx.db.doc.send(
    new GetCommand({ TableName: ctx.db.table, Key: counterKey(ctx.userId, counter), ConsistentRead: true }),
  );
  return Number(out.Item?.value ?? 0);
}

/**
 * The write that takes number `last + 1`, for the document's own transaction. `onTaken` is the
 * error when another writer took it first (the caller's cue to read again and retry).
 */
export function takeNumberWrite(ctx: Pick<Ctx, "db" | "userId">, counter: NumberCounter, last: number, onTaken: () => Error): Write {
  return {
    op: {
      Update: {
        TableName: ctx.db.table,
        Key: counterKey(ctx.userId, counter),
        UpdateExpression: "SET #value = :next",
        ConditionExpression: last === 0 ? "attribute_not_exists(#value) OR #value = :last" : "#value = :last",
        ExpressionAttributeNames: { "#value": "value" },
        ExpressionAttributeValues: { ":next": last + 1, ":last": last },
      },
    },
    onConditionFailed: onTaken,
  };
}

/** Many writers of one sequence retry often; this bounds the waiting and spreads them out. */
export const MAX_NUMBERING_ATTEMPTS = 60;
export const numberingBackoff = (attempt: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(200, 5 * 2 ** attempt)));
