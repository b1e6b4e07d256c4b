import { createHash, randomBytes } from "node:crypto";
import { BatchGetCommand, type BatchGetCommandOutput, GetCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { Db } from "../db/client";
import { commit } from "../db/commit";
import { nextId } from "../db/ids";
import { entityKey, userPk } from "../db/keys";
import { notFound } from "../errors";

/**
 * API keys. The plain key is shown once; the table holds only its SHA-256, as the partition key of
 * an item that maps it to the user, so authentication is one GetItem. A second item under the user
 * lists the key's metadata (name, prefix) for GET /api-keys.
 */
export const KEY_PREFIX = "inv_";
const KEY_SHAPE = /^inv_[A-Za-z0-9_-]{43}$/;
export const USER_ID_SHAPE = /^[A-Za-z0-9_-]{1,64}$/;
/** lastUsedAt is refreshed at most this often, so authentication stays one read per request. */
const LAST_USED_GRANULARITY_MS = 15 * 60_000;

export interface ApiKey {
  id: number;
  name: string | null;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
}

interface KeyMetaItem {
  id: number;
  name: string | null;
  prefix: string;
  createdAt: string;
  hash: string;
}

interface KeyHashItem {
  userId: string;
  keyId: number;
  lastUsedAt?: string;
}

export const hashKey = (key: string): string => createHash("sha256").update(key).digest("hex");
const hashItemKey = (hash: string) => ({ pk: `APIKEY#${hash}`, sk: "APIKEY" });

export interface Principal {
  userId: string;
  keyId: number;
  /** A pending lastUsedAt refresh, to await before the response is done (Lambda freezes after). */
  touch?: Promise<unknown>;
}

/** Resolves a bearer token to its user, or undefined for anything that is not a live key. */
export async function authenticate(db: Db, token: string, now: Date): Promise<Principal | undefined> {
  if (!KEY_SHAPE.test(token)) return undefined;
  const hash = hashKey(token);
  const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: hashItemKey(hash), ConsistentRead: true }));
  const item = out.Item as KeyHashItem | undefined;
  if (!item) return undefined;
  const principal: Principal = { userId: item.userId, keyId: item.keyId };
  const last = item.lastUsedAt ? Date.parse(item.lastUsedAt) : 0;
  if (now.getTime() - last >= LAST_USED_GRANULARITY_MS) {
    principal.touch = db.doc
      .send(new UpdateCommand({
        TableName: db.table,
        Key: hashItemKey(hash),
        UpdateExpression: "SET lastUsedAt = :now",
        ConditionExpression: "attribute_exists(pk)",
        ExpressionAttributeValues: { ":now": now.toISOString() },
      }))
      .catch(() => undefined); // best effort: a usage timestamp must never fail a request
  }
  return principal;
}

export interface CreatedKey extends Omit<ApiKey, "lastUsedAt"> {
  key: string;
}

export async function createApiKey(db: Db, userId: string, name: string | null, now: Date): Promise<CreatedKey> {
  const key = KEY_PREFIX + randomBytes(32).toString("base64url");
  const hash = hashKey(key);
  const id = await nextId(db, userId, "apikey");
  const createdAt = now.toISOString();
  const meta: KeyMetaItem = { id, name, prefix: key.slice(0, 12), createdAt, hash };
  await commit({ db }, [
    {
      op: {
        Update: {
          TableName: db.table,
          Key: { pk: userPk(userId), sk: "PROFILE" },
          UpdateExpression: "SET userId = :u, createdAt = if_not_exists(createdAt, :now)",
          ExpressionAttributeValues: { ":u": userId, ":now": createdAt },
        },
      },
    },
    { op: { Put: { TableName: db.table, Item: { ...entityKey(userId, "APIKEY", id), ...meta }, ConditionExpression: "attribute_not_exists(pk)" } } },
    { op: { Put: { TableName: db.table, Item: { ...hashItemKey(hash), userId, keyId: id }, ConditionExpression: "attribute_not_exists(pk)" } } },
  ]);
  return { id, name, key, prefix: meta.prefix, createdAt };
}

export async function listApiKeys(db: Db, userId: string): Promise<ApiKey[]> {
  const metas: KeyMetaItem[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await db.doc.send(new QueryCommand({
      TableName: db.table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": userPk(userId), ":prefix": "APIKEY#" },
      ScanIndexForward: false,
      ExclusiveStartKey: startKey,
    }));
    metas.push(...((out.Items ?? []) as KeyMetaItem[]));
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  const lastUsed = new Map<string, string>();
  for (let i = 0; i < metas.length; i += 100) {
    let keys: Record<string, unknown>[] | undefined = metas.slice(i, i + 100).map((m) => hashItemKey(m.hash));
    while (keys && keys.length) {
      const out: BatchGetCommandOutput = await db.doc.send(new BatchGetCommand({ RequestItems: { [db.table]: { Keys: keys } } }));
      for (const item of out.Responses?.[db.table] ?? []) {
        if (item.lastUsedAt) lastUsed.set(String(item.pk).slice("APIKEY#".length), item.lastUsedAt as string);
      }
      keys = out.UnprocessedKeys?.[db.table]?.Keys;
    }
  }
  return metas.map((m) => ({ id: m.id, name: m.name ?? null, prefix: m.prefix, createdAt: m.createdAt, lastUsedAt: lastUsed.get(m.hash) ?? null }));
}

export async function revokeApiKey(db: Db, userId: string, id: number): Promise<void> {
  const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: entityKey(userId, "APIKEY", id) }));
  const meta = out.Item as KeyMetaItem | undefined;
  if (!meta) throw notFound("api key", id);
  await commit({ db }, [
    { op: { Delete: { TableName: db.table, Key: entityKey(userId, "APIKEY", id), ConditionExpression: "attribute_exists(pk)" } }, onConditionFailed: () => notFound("api key", id) },
    { op: { Delete: { TableName: db.table, Key: hashItemKey(meta.hash) } } },
  ]);
}
