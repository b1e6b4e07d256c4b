import { BatchGetCommand, type BatchGetCommandOutput } from "@aws-sdk/lib-dynamodb";
import type { Db } from "./dynamodb";

type Key = { pk: string; sk: string };

/**
 * Several items of one table in one round trip (more only for keys DynamoDB leaves unprocessed),
 * strongly consistent, by sort key. A missing item is simply absent from the map.
 */
export async function batchGet(db: Db, keys: readonly Key[]): Promise<Map<string, Record<string, unknown>>> {
  const found = new Map<string, Record<string, unknown>>();
  let pending: Record<string, unknown>[] | undefined = [...keys];
  while (pending && pending.length) {
    const out: BatchGetCommandOutput = await db.doc.send(
      new BatchGetCommand({ RequestItems: { [db.table]: { Keys: pending, ConsistentRead: true } } }),
    );
    for (const item of out.Responses?.[db.table] ?? []) found.set(`${item.pk as string}|${item.sk as string}`, item);
    pending = out.UnprocessedKeys?.[db.table]?.Keys;
  }
  return found;
}

export const batchKey = (key: Key): string => `${key.pk}|${key.sk}`;
