import { randomUUID } from "node:crypto";
import {
  ConditionalCheckFailedException,
  TransactionCanceledException,
} from "@aws-sdk/client-dynamodb";
import {
  DeleteCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
  type TransactWriteCommandInput,
} from "@aws-sdk/lib-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import type { Db } from "./client";

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

const MAX_CONFLICT_RETRIES = 5;

/**
 * Applies a change: one conditional write, or one TransactWriteItems for several. All-or-nothing.
 * `result` is what the change produces (passed to the commit hook).
 */
export async function commit(ctx: CommitContext, writes: Write[], result?: unknown): Promise<void> {
  const all = [...writes];
  const hookWrite = ctx.commitHook?.writeFor(result);
  if (hookWrite) all.push(hookWrite);
  if (all.length === 0) return;
  if (all.length === 1 && !all[0]!.op.ConditionCheck) return single(ctx.db, all[0]!);
  return transact(ctx.db, all);
}

async function single(db: Db, write: Write): Promise<void> {
  const { Put, Update, Delete } = write.op;
  const returnOld = { ReturnValuesOnConditionCheckFailure: "ALL_OLD" as const };
  try {
    if (Put) await db.doc.send(new PutCommand({ ...Put, ...returnOld }));
    else if (Update) await db.doc.send(new UpdateCommand({ ...Update, ...returnOld }));
    else if (Delete) await db.doc.send(new DeleteCommand({ ...Delete, ...returnOld }));
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException && write.onConditionFailed) {
      throw write.onConditionFailed(error.Item ? unmarshallLoose(error.Item) : undefined);
    }
    throw error;
  }
}

async function transact(db: Db, writes: Write[]): Promise<void> {
  const items = writes.map((w) => withReturnOld(w.op));
  for (let attempt = 0; ; attempt++) {
    try {
      // A fresh token per attempt: the SDK's own retries of one attempt reuse it, so a timeout after
      // DynamoDB applied the transaction cannot apply it twice.
      await db.doc.send(new TransactWriteCommand({ TransactItems: items, ClientRequestToken: randomUUID() }));
      return;
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const reasons = error.CancellationReasons ?? [];
      const failed = reasons.findIndex((r) => r.Code === "ConditionalCheckFailed");
      if (failed >= 0) {
        const handler = writes[failed]?.onConditionFailed;
        if (handler) throw handler(reasons[failed]?.Item ? unmarshallLoose(reasons[failed]!.Item!) : undefined);
        throw error;
      }
      const conflict = reasons.some((r) => r.Code === "TransactionConflict");
      if (!conflict || attempt >= MAX_CONFLICT_RETRIES) throw error;
      await sleep(Math.random() * 20 * 2 ** attempt);
    }
  }
}

function withReturnOld(op: TransactItem): TransactItem {
  const key = (Object.keys(op) as (keyof TransactItem)[])[0]!;
  return { [key]: { ...(op[key] as object), ReturnValuesOnConditionCheckFailure: "ALL_OLD" } } as TransactItem;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Cancellation reasons and ConditionalCheckFailedException carry raw attribute values.
function unmarshallLoose(item: Record<string, unknown>): Item {
  try {
    return unmarshall(item as Parameters<typeof unmarshall>[0]);
  } catch {
    return item;
  }
}
