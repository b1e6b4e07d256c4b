import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { Db } from "./client";
import type { Write } from "./commit";
import { isTransactionConflict } from "./errors";
import { counterKey } from "./keys";

/**
 * Allocates the next value of a per-user counter (ids per kind: a user's first client is 1).
 * Ids may skip a value when the write that follows fails; invoice numbers never use this path
 * because they must be gapless (see invoices/finalize).
 */
export async function nextId(db: Db, userId: string, counter: string): Promise<number> {
  const out = await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: counterKey(userId, counter),
      UpdateExpression: "ADD #v :one",
      ExpressionAttributeNames: { "#v": "value" },
      ExpressionAttributeValues: { ":one": 1 },
      ReturnValues: "UPDATED_NEW",
    }),
  );
  return Number(out.Attributes?.value);
}

/**
 * Taking a counter's next value INSIDE the transaction that uses it, instead of bumping it first
 * (nextId): the caller reads the counter's value along with whatever else it reads (the client of
 * a new document: one round trip, the API key's check included on a request's first read), and its
 * transaction moves the counter from that value to the next, conditioned on the value read. A create
 * is then one read and one write. Losing a race to another writer of the counter means reading
 * again (retryWhileTaken). Compatible with nextId's ADD on the same counter: either way the value
 * only grows, and a value is never given twice.
 */
interface CounterCtx {
  db: Db;
  userId: string;
}

/** The last value a user's counter gave out (0 before the first), read consistently. */
export async function counterValue(ctx: CounterCtx, counter: string): Promise<number> {
  const out = await ctx.db.doc.send(
    new GetCommand({ TableName: ctx.db.table, Key: counterKey(ctx.userId, counter), ConsistentRead: true }),
  );
  return Number(out.Item?.value ?? 0);
}

/**
 * The write that takes value `last + 1`, for the caller's own transaction. `onTaken` is the error
 * when another writer took it first (retryWhileTaken's cue to read again).
 */
export function takeCounterWrite(ctx: CounterCtx, counter: string, last: number, onTaken: () => Error): Write {
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

/** Many writers of one counter retry often; this bounds the waiting and spreads them out. */
export const MAX_TAKE_ATTEMPTS = 60;
export const takeBackoff = (attempt: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(200, 5 * 2 ** attempt)));

/** Thrown when a counter stays contended past MAX_TAKE_ATTEMPTS; its `busy` error is what the caller sees. */
class Taken extends Error {}

/**
 * Runs `attempt` (read, then one transaction with takeCounterWrite) until no other writer took the
 * value it read first. `onTaken` is what the attempt's counter writes throw when they lose; a
 * transaction conflict (a concurrent transaction on the counter) is retried the same way.
 * `busy` is the error after too many lost races.
 */
export async function retryWhileTaken<T>(attempt: (onTaken: () => Error) => Promise<T>, busy: () => Error): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt(() => new Taken());
    } catch (error) {
      if (!(error instanceof Taken || isTransactionConflict(error))) throw error;
      if (n >= MAX_TAKE_ATTEMPTS) throw busy();
      await takeBackoff(n);
    }
  }
}
