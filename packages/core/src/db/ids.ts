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

/** Takes `counter`'s value after `last` in the transaction being built: a gapless number's way. */
type Take = (counter: string, last: number) => Write;

/** The id this create gets from `counter`, its taking written into the create's transaction. */
type TakeId = (counter: string) => Promise<number>;

/**
 * A create that takes counter values inside its own transaction: `build` reads what it needs and
 * returns the writes and what the change produces, committed as one transaction. A gapless number
 * is read by `build` and taken with `take(counter, last)`; an id is `takeId(counter)`, which reads
 * the counter (in parallel with `build`'s other reads) and adds its taking to the transaction.
 *
 * When another writer took a value first (or a concurrent transaction conflicts), `build` runs again
 * on fresh reads — the optimistic loop (optimistic.ts). A number must be read again (gapless: it
 * moves only with its document). An id need not be: a create that lost the race for an id takes
 * its next one with an atomic ADD (nextId) and keeps it for every later round, so N concurrent
 * creates of one user send about 2N transactions, not the N(N+1)/2 of a hot counter re-read by
 * each loser — and a user's burst of creates holds its Lambdas for a round or two, not for seconds
 * of lost rounds and backoff (docs/reliability.md, "Hot counters"). The cost: an id lost to a race
 * and then to a create that fails for good (its client deleted meanwhile) is skipped; ids are
 * allowed gaps, numbers are not. A resend that meets its own applied copy is the success it was
 * (commit() tells it by its write token). `what` names the counter in the 503 after too many races.
 */
export async function createTakingValues<T>(
  ctx: CommitContext & CounterCtx,
  what: string,
  build: (take: Take, takeId: TakeId) => Promise<{ writes: Write[]; result: T }>,
): Promise<T> {
  /** Ids taken by ADD after a lost race: this create's for good, in every later round. */
  const held = new Map<string, number>();
  /** Id counters whose conditional taking lost a race: the next round takes them by ADD. */
  const lost = new Set<string>();
  return optimistic(what, async () => {
    const idWrites: Write[] = [];
    const takeId: TakeId = async (counter) => {
      const kept = held.get(counter);
      if (kept !== undefined) return kept;
      if (lost.has(counter)) {
        const id = await nextId(ctx.db, ctx.userId, counter);
        held.set(counter, id);
        return id;
      }
      const last = await counterValue(ctx, counter);
      idWrites.push(
        takeCounterWrite(ctx, counter, last, () => {
          lost.add(counter);
          return new Raced();
        }),
      );
      return last + 1;
    };
    const take: Take = (counter, last) => takeCounterWrite(ctx, counter, last, () => new Raced());
    const { writes, result } = await build(take, takeId);
    await commit(ctx, [...idWrites, ...writes], result);
    return result;
  });
}
