import { BatchGetCommand, type BatchGetCommandOutput } from "@aws-sdk/lib-dynamodb";
import { DomainError } from "../errors";
import type { Db } from "./dynamodb";
import { backoff } from "./optimistic";

/** A table key: `{ pk, sk }`. */
type Key = Record<string, unknown>;

/** BatchGetItem takes at most 100 keys a request. */
const MAX_KEYS = 100;

/**
 * Retries of keys DynamoDB keeps leaving unprocessed (a throttled partition) before the read is a
 * 503 service_unavailable: 8 requests in all for up to 100 keys, each itself retried by the SDK
 * (db/dynamodb.ts), with the optimistic loop's backoff between them (optimistic.ts: at most
 * 5 + 10 + 20 + 40 + 80 + 160 + 200 = 515 ms of waiting; docs/reliability.md).
 */
const MAX_BATCH_RETRIES = 7;

export const batchKey = (key: Key): string => `${String(key.pk)}|${String(key.sk)}`;

/**
 * THE batch read: items of one table in one round trip (100 keys a request), strongly consistent
 * unless told otherwise, keyed by batchKey(). Duplicate keys are asked once (DynamoDB refuses a
 * request that repeats one); a missing item is simply absent from the map. Keys left unprocessed
 * are asked again after a backoff, at most MAX_BATCH_RETRIES times.
 */
export async function batchGet(
  db: Db,
  keys: readonly Key[],
  options: { consistent?: boolean } = {},
): Promise<Map<string, Record<string, unknown>>> {
  const found = new Map<string, Record<string, unknown>>();
  let pending: Record<string, unknown>[] = [...new Map(keys.map((key) => [batchKey(key), key])).values()];
  let retries = 0;
  while (pending.length > 0) {
    const out: BatchGetCommandOutput = await db.doc.send(
      new BatchGetCommand({
        RequestItems: { [db.table]: { Keys: pending.slice(0, MAX_KEYS), ConsistentRead: options.consistent ?? true } },
      }),
    );
    for (const item of out.Responses?.[db.table] ?? []) found.set(batchKey(item), item);
    const unprocessed = out.UnprocessedKeys?.[db.table]?.Keys ?? [];
    pending = [...unprocessed, ...pending.slice(MAX_KEYS)];
    if (unprocessed.length > 0) {
      if (++retries > MAX_BATCH_RETRIES)
        throw new DomainError("service_unavailable", "the database is busy; retry shortly");
      await backoff(retries);
    }
  }
  return found;
}
