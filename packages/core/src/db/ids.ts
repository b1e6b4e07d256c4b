import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { Db } from "./dynamodb";
import { commit, type CommitContext, type Write } from "./commit";
import { counterKey } from "./keys";
import { optimistic, Raced } from "./optimistic";

/**
 * Allocates the next value of a per-user counter (ids per kind: a user's first client is 1).
 * Ids may skip a value when the write that follows fails; document numbers (invoice, estimate,
 * credit note) never use this path because they must be gapless: their counter moves inside the
 * transaction that uses it (takeCounterWrite below; finalizeInvoice in invoices/lifecycle.ts).
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
 * again (createTakingValues). Compatible with nextId's ADD on the same counter: either way the value
 * only grows, and a value is never given twice.
 */
export interface CounterCtx {
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
 * when another writer took it first; it gets the counter as the failed condition found it. A resend
 * of this very transaction that finds its own earlier copy applied (a lost response) is commit()'s
 * to recognise, by its write token (db/commit.ts), like every write's.
 */
export function takeCounterWrite(
  ctx: CounterCtx,
  counter: string,
  last: number,
  onTaken: (seen: Record<string, unknown> | undefined) => Error,
): Write {
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

/** Takes `counter`'s value after `last` in the transaction being built. */
type Take = (counter: string, last: number) => Write;

/**
 * A create that takes counter values inside its own transaction: `build` reads what it needs (the
 * counters' values among it) and returns the writes — with a `take(counter, last)` for each value
 * it takes — and what the change produces. Committed as one transaction; when another writer took a
 * value first (or a concurrent transaction conflicts), `build` runs again on fresh reads — the
 * optimistic loop (optimistic.ts), whose backoff spreads a user's concurrent creates out on the hot
 * counter. A resend that meets its own applied copy is the success it was (commit() tells it by its
 * write token). `what` names the
 * counter in the 503 after too many races.
 */
export async function createTakingValues<T>(
  ctx: CommitContext & CounterCtx,
  what: string,
  build: (take: Take) => Promise<{ writes: Write[]; result: T }>,
): Promise<T> {
  return optimistic(what, async () => {
    const { writes, result } = await build((counter, last) => takeCounterWrite(ctx, counter, last, () => new Raced()));
    await commit(ctx, writes, result);
    return result;
  });
}
