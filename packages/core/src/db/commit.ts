import { randomUUID } from "node:crypto";
import { ConditionalCheckFailedException, TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { PutCommand, TransactWriteCommand, UpdateCommand, type TransactWriteCommandInput } from "@aws-sdk/lib-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import type { Db } from "./dynamodb";
import { isTransientCancellation } from "./errors";
import { anotherRound, inOptimisticRound, retryRounds } from "./optimistic";

export type TransactItem = NonNullable<TransactWriteCommandInput["TransactItems"]>[number];
type Item = Record<string, unknown>;

/**
 * One write of a change. `onConditionFailed` turns a failed condition into the domain error it
 * means; it gets the item as it was (ALL_OLD), or undefined when there was none.
 */
export interface Write {
  op: TransactItem;
  onConditionFailed?: (old: Item | undefined) => Error;
}

/**
 * Something that wants its own write in the same transaction as the change: the idempotency layer
 * records the response in the very transaction that performs the effect, so the two never disagree.
 */
export interface CommitHook {
  writeFor(result: unknown): Write | undefined;
}

export interface CommitContext {
  db: Db;
  commitHook?: CommitHook;
}

/**
 * Applies a change: one conditional write, or one TransactWriteItems for several. All-or-nothing.
 * `result` is what the change produces (passed to the commit hook). A single Update answers the
 * item as it wrote it (ALL_NEW; transition() returns it); anything else answers undefined.
 */
export async function commit(ctx: CommitContext, writes: Write[], result?: unknown): Promise<Item | undefined> {
  const all = [...writes];
  const hookWrite = ctx.commitHook?.writeFor(result);
  if (hookWrite) all.push(hookWrite);
  if (all.length === 0) return undefined;
  if (all.length === 1 && !all[0]!.op.ConditionCheck) return single(ctx.db, all[0]!);
  await transact(ctx.db, all);
  return undefined;
}

/**
 * At most once per commit() call, whatever the network does. The SDK resends a request whose
 * response was lost (timeout, connection reset) exactly as it was, and the first copy may well have
 * been applied. TransactWriteItems is safe: the ClientRequestToken makes DynamoDB answer the resend
 * with the first one's result. A single PutItem/UpdateItem has no such token: its resend meets the
 * item its own first copy wrote, so its condition fails (a create answered 500, a PATCH with
 * If-Match 412, a transition 422 — though each happened), or, unconditional, it applies twice.
 *
 * So every single Put/Update carries a fresh random write token, stored on the item, and the extra
 * condition "this item was not written with my token". A resend that fails only because of it finds
 * its own token in the item (ALL_OLD): the write is done, and that is a success. Weighed against the
 * alternative (every single write as a one-item transaction with a token): the same guarantee for a
 * few bytes per item, where a transaction costs twice the write capacity and returns no ALL_NEW.
 * Limit: if another request changes the item between the lost response and the resend, the resend
 * judges by that newer item (as a request arriving then would).
 * A Delete leaves no item to carry a token, so a single Delete is sent as a one-item transaction
 * (deletes are rare; the double cost is accepted there).
 */
const WRITE_TOKEN = "writeToken";
const TOKEN_NAME = "#commitWriteToken";
const TOKEN_VALUE = ":commitWriteToken";

interface GuardableInput {
  ConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

/** The write's condition, plus "not already written by this very call" (see WRITE_TOKEN). */
function guardCondition<T extends GuardableInput>(input: T, token: string): T {
  const guard = `(attribute_not_exists(${TOKEN_NAME}) OR ${TOKEN_NAME} <> ${TOKEN_VALUE})`;
  return {
    ...input,
    ConditionExpression: input.ConditionExpression ? `(${input.ConditionExpression}) AND ${guard}` : guard,
    ExpressionAttributeNames: { ...input.ExpressionAttributeNames, [TOKEN_NAME]: WRITE_TOKEN },
    ExpressionAttributeValues: { ...input.ExpressionAttributeValues, [TOKEN_VALUE]: token },
  };
}

/** An UpdateItem input that also stores `token` and applies at most once (see WRITE_TOKEN). */
function onceOnlyUpdate<T extends GuardableInput & { UpdateExpression?: string }>(input: T, token: string): T {
  const set = `${TOKEN_NAME} = ${TOKEN_VALUE}`;
  const expression = input.UpdateExpression ?? "";
  // Clauses may come in any order; SET is a reserved word, so as a word it can only be the keyword.
  const withToken = /(^|\s)SET\s/i.test(expression)
    ? expression.replace(/(^|\s)SET\s/i, (m) => `${m}${set}, `)
    : `SET ${set} ${expression}`.trim();
  return guardCondition({ ...input, UpdateExpression: withToken }, token);
}

/** Whether the item a failed condition returned is the one this call's own write produced. */
const writtenBy = (old: Item | undefined, token: string): boolean => old?.[WRITE_TOKEN] === token;

async function single(db: Db, write: Write): Promise<Item | undefined> {
  const { Put, Update, Delete } = write.op;
  if (Delete) {
    await transact(db, [write]);
    return undefined;
  }
  const token = randomUUID();
  const returnOld = { ReturnValuesOnConditionCheckFailure: "ALL_OLD" as const };
  try {
    if (Put)
      await db.doc.send(
        new PutCommand({ ...guardCondition(Put, token), Item: { ...Put.Item, [WRITE_TOKEN]: token }, ...returnOld }),
      );
    else if (Update)
      return (
        await db.doc.send(
          new UpdateCommand({ ...onceOnlyUpdate(Update, token), ReturnValues: "ALL_NEW", ...returnOld }),
        )
      ).Attributes;
    return undefined;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) {
      const old = error.Item ? unmarshallLoose(error.Item) : undefined;
      // A resend met its own first copy: the write is done, and that copy is the item it wrote.
      if (writtenBy(old, token)) return old;
      if (write.onConditionFailed) throw write.onConditionFailed(old);
    }
    throw error;
  }
}

/**
 * Transactions carry the write token too. The ClientRequestToken covers the SDK's resends of ONE
 * attempt; but when a resend of an attempt that DynamoDB did apply comes back cancelled anyway (a
 * TransactionConflict or throttling reason — the fault proxy injects exactly that, and a loaded
 * machine's timeouts make such resends common), transact() sends it again as a NEW transaction,
 * which must not apply the change a second time, nor report its own first copy as a conflict
 * (a create answered 500: found by the model test under CPU load). With the token, every Put and
 * Update of the retry fails its guard, and the items returned (ALL_OLD) show this call's token:
 * the change is done, and that is a success.
 */
function withWriteToken(op: TransactItem, token: string): TransactItem {
  if (op.Put) return { Put: { ...guardCondition(op.Put, token), Item: { ...op.Put.Item, [WRITE_TOKEN]: token } } };
  if (op.Update) return { Update: onceOnlyUpdate(op.Update, token) };
  return op;
}

/**
 * One transaction, sent until its outcome is known. Cancelled before anything applied (a concurrent
 * transaction on an item, or throttling of one item), it is sent again — never by a loop of its own:
 * inside an optimistic() round that loop reads again and decides again; outside any, the same loop
 * (retryRounds) sends it again. One exception, where only sending the same writes again tells: after
 * an SDK resend an earlier copy may have applied, so a cancellation then is answered by sending again
 * with the same write token (see withWriteToken), each send a round of the enclosing loop
 * (anotherRound). Either way a change sends at most MAX_ROUNDS transactions (docs/reliability.md).
 */
async function transact(db: Db, writes: Write[]): Promise<void> {
  const token = randomUUID();
  const items = writes.map((w) => withReturnOld(withWriteToken(w.op, token)));
  const send = () => sendUntilKnown(db, writes, items, token);
  if (inOptimisticRound()) return send();
  return retryRounds("record", send, isTransientCancellation);
}

async function sendUntilKnown(db: Db, writes: Write[], items: TransactItem[], token: string): Promise<void> {
  let unknown = false;
  for (;;) {
    try {
      // A fresh request token per send: the SDK's own retries of one send reuse it, so a timeout after
      // DynamoDB applied the transaction cannot apply it twice (DynamoDB answers the resend with the
      // first one's result for 10 minutes; a resend arriving while the first still runs gets
      // TransactionInProgressException, which the SDK retries as throttling, with the same token).
      await db.doc.send(new TransactWriteCommand({ TransactItems: items, ClientRequestToken: randomUUID() }));
      return;
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const reasons = error.CancellationReasons ?? [];
      const failed = reasons.findIndex((r) => r.Code === "ConditionalCheckFailed");
      const own = reasons.some(
        (r) => r.Code === "ConditionalCheckFailed" && r.Item && writtenBy(unmarshallLoose(r.Item), token),
      );
      if (own) return; // an earlier send of this very call applied (see withWriteToken)
      if (failed >= 0) {
        const handler = writes[failed]?.onConditionFailed;
        if (handler) throw handler(reasons[failed]?.Item ? unmarshallLoose(reasons[failed]!.Item!) : undefined);
        throw error;
      }
      // Nothing applied by this send. Certain only if no send of this call was ever resent by the SDK.
      unknown ||= (error.$metadata?.attempts ?? 1) > 1;
      if (!unknown || !isTransientCancellation(error) || !(await anotherRound())) throw error;
    }
  }
}

function withReturnOld(op: TransactItem): TransactItem {
  const key = (Object.keys(op) as (keyof TransactItem)[])[0]!;
  return { [key]: { ...(op[key] as object), ReturnValuesOnConditionCheckFailure: "ALL_OLD" } } as TransactItem;
}

// Cancellation reasons and ConditionalCheckFailedException carry raw attribute values.
function unmarshallLoose(item: Record<string, unknown>): Item {
  try {
    return unmarshall(item as Parameters<typeof unmarshall>[0]);
  } catch {
    return item;
  }
}
