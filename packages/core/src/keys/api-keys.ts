import { createHash, randomBytes } from "node:crypto";
import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { batchGet } from "../db/batch-get";
import type { Db } from "../db/dynamodb";
import { commit } from "../db/commit";
import { nextId } from "../db/ids";
import { entityKey, userPk } from "../db/keys";
import { allUserItems } from "../db/user-items";
import { notFound, ValidationError } from "../errors";
import type { ApiKey, CreatedApiKey as CreatedKey, KeyScope } from "./resource";

/**
 * API keys. The plain key is shown once; the table holds only its SHA-256, as the partition key of
 * an item that maps it to the user, so authentication is one GetItem. A second item under the user
 * lists the key's metadata (name, prefix) for GET /api-keys.
 *
 * A key names its user: `inv_<userId>_<secret>`. The user in the key is only a claim, never trusted
 * alone: it lets a request fetch the key item and the user's record in ONE round trip, and the key
 * item (found by the hash of the whole key) must exist and belong to that same user before anything
 * read is answered (keys/authorized-db.ts; docs/auth.md). Keys made before this format
 * (`inv_<secret>`) keep working, at one extra round trip: only their hash is stored, so they cannot
 * be rewritten.
 *
 * A key has a scope (`full`, or `read_only`: it may only read) and may expire. Both are copied onto
 * the hash item, the one item every request reads anyway, so checking them costs no extra request
 * (docs/auth.md). Items written before keys had them read as `full` and never expiring.
 */
const KEY_PREFIX = "inv_";
export const USER_ID_SHAPE = /^[A-Za-z0-9_-]{1,64}$/;
/** 32 random bytes, base64url: 43 characters. Fixed length, so a user id may itself contain `_`. */
const SECRET = "[A-Za-z0-9_-]{43}";
const LEGACY_KEY_SHAPE = new RegExp(`^inv_${SECRET}$`);
const NAMED_KEY_SHAPE = new RegExp(`^inv_([A-Za-z0-9_-]{1,64})_${SECRET}$`);
/** lastUsedAt is refreshed at most this often, so authentication stays one read per request. */
const LAST_USED_GRANULARITY_MS = 15 * 60_000;

/** The public key and the answer to a create: their shapes are the response schemas (./resource.ts). */
export type { ApiKey, KeyScope };

interface KeyMetaItem {
  id: number;
  name: string | null;
  scope?: KeyScope;
  expiresAt?: string | null;
  prefix: string;
  createdAt: string;
  hash: string;
}

interface KeyHashItem {
  userId: string;
  keyId: number;
  scope?: KeyScope;
  expiresAt?: string | null;
  lastUsedAt?: string;
}

/** What a key is made with besides its name. */
interface KeyOptions {
  scope?: KeyScope;
  /** ISO 8601 UTC; must be later than `now`. */
  expiresAt?: string | null;
}

export const hashKey = (key: string): string => createHash("sha256").update(key).digest("hex");
const hashItemKey = (hash: string) => ({ pk: `APIKEY#${hash}`, sk: "APIKEY" });

export interface Principal {
  userId: string;
  keyId: number;
  scope: KeyScope;
  /** A pending lastUsedAt refresh, to await before the response is done (Lambda freezes after). */
  touch?: Promise<unknown>;
}

/** A bearer token of a key's shape: the hash to look up and, for a key that names one, its user. */
export interface KeyClaim {
  hash: string;
  /** The user the key names (a claim until the key item confirms it); absent for legacy keys. */
  userId?: string;
}

/** The token's claim, or undefined when it cannot be a key (then no lookup is made at all). */
export function parseKey(token: string): KeyClaim | undefined {
  const named = NAMED_KEY_SHAPE.exec(token);
  if (named) return { hash: hashKey(token), userId: named[1]! };
  if (LEGACY_KEY_SHAPE.test(token)) return { hash: hashKey(token) };
  return undefined;
}

/** The key item's primary key, for reads that fetch it along with other items. */
export const keyItemKey = (claim: KeyClaim) => hashItemKey(claim.hash);

/** Resolves a bearer token to its user, or undefined for anything that is not a live key. */
export async function authenticate(db: Db, token: string, now: Date): Promise<Principal | undefined> {
  const claim = parseKey(token);
  if (!claim) return undefined;
  const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: keyItemKey(claim), ConsistentRead: true }));
  return principalOf(db, claim, out.Item, now);
}

/**
 * The principal a key item grants, or undefined: no item (unknown or revoked key), an item of
 * another user than the key names (a forged key: the hash of the whole key decides, the claim must
 * agree), or a key whose `expiresAt` has come (from that instant on, like a revoked key). Starts the
 * rare lastUsedAt refresh.
 */
export function principalOf(
  db: Db,
  claim: KeyClaim,
  found: Record<string, unknown> | undefined,
  now: Date,
): Principal | undefined {
  const item = found as KeyHashItem | undefined;
  if (!item || typeof item.userId !== "string") return undefined;
  if (claim.userId !== undefined && item.userId !== claim.userId) return undefined;
  if (item.expiresAt && now.getTime() >= Date.parse(item.expiresAt)) return undefined;
  const hash = claim.hash;
  const principal: Principal = {
    userId: item.userId,
    keyId: item.keyId,
    scope: item.scope === "read_only" ? "read_only" : "full",
  };
  const last = item.lastUsedAt ? Date.parse(item.lastUsedAt) : 0;
  if (now.getTime() - last >= LAST_USED_GRANULARITY_MS) {
    principal.touch = db.doc
      .send(
        new UpdateCommand({
          TableName: db.table,
          Key: hashItemKey(hash),
          UpdateExpression: "SET lastUsedAt = :now",
          ConditionExpression: "attribute_exists(pk)",
          ExpressionAttributeValues: { ":now": now.toISOString() },
        }),
      )
      .catch(() => undefined); // best effort: a usage timestamp must never fail a request
  }
  return principal;
}

/** Whether a principal may change anything (any method but GET and HEAD): full keys only. */
export const mayChange = (principal: Principal): boolean => principal.scope === "full";

export async function createApiKey(
  db: Db,
  userId: string,
  name: string | null,
  now: Date,
  options: KeyOptions = {},
): Promise<CreatedKey> {
  if (!USER_ID_SHAPE.test(userId)) throw new Error(`user id "${userId}" is not 1–64 of A–Z a–z 0–9 _ -`);
  const scope = options.scope ?? "full";
  const expiresAt = options.expiresAt ?? null;
  if (expiresAt !== null && !(Date.parse(expiresAt) > now.getTime())) {
    throw new ValidationError([{ path: "expiresAt", message: "must be in the future" }]);
  }
  const key = `${KEY_PREFIX}${userId}_${randomBytes(32).toString("base64url")}`;
  const hash = hashKey(key);
  const id = await nextId(db, userId, "apikey");
  const createdAt = now.toISOString();
  // What recognises the key in GET /api-keys: its user part and the secret's first 8 characters.
  const prefix = key.slice(0, KEY_PREFIX.length + userId.length + 1 + 8);
  const meta: KeyMetaItem = { id, name, scope, expiresAt, prefix, createdAt, hash };
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
    {
      op: {
        Put: {
          TableName: db.table,
          Item: { ...entityKey(userId, "APIKEY", id), ...meta },
          ConditionExpression: "attribute_not_exists(pk)",
        },
      },
    },
    {
      op: {
        Put: {
          TableName: db.table,
          Item: { ...hashItemKey(hash), userId, keyId: id, scope, expiresAt },
          ConditionExpression: "attribute_not_exists(pk)",
        },
      },
    },
  ]);
  return { id, name, scope, expiresAt, key, prefix: meta.prefix, createdAt };
}

export async function listApiKeys(db: Db, userId: string): Promise<ApiKey[]> {
  const metas = await allUserItems<KeyMetaItem>(db, userId, "APIKEY#", { newestFirst: true });
  const lastUsed = new Map<string, string>();
  const hashItems = await batchGet(
    db,
    metas.map((m) => hashItemKey(m.hash)),
    { consistent: false },
  );
  for (const item of hashItems.values()) {
    if (item.lastUsedAt) lastUsed.set(String(item.pk).slice("APIKEY#".length), item.lastUsedAt as string);
  }
  return metas.map((m) => ({
    id: m.id,
    name: m.name ?? null,
    scope: m.scope ?? "full",
    expiresAt: m.expiresAt ?? null,
    prefix: m.prefix,
    createdAt: m.createdAt,
    lastUsedAt: lastUsed.get(m.hash) ?? null,
  }));
}

export async function revokeApiKey(db: Db, userId: string, id: number): Promise<void> {
  const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: entityKey(userId, "APIKEY", id) }));
  const meta = out.Item as KeyMetaItem | undefined;
  if (!meta) throw notFound("api key", id);
  await commit({ db }, [
    {
      op: {
        Delete: {
          TableName: db.table,
          Key: entityKey(userId, "APIKEY", id),
          ConditionExpression: "attribute_exists(pk)",
        },
      },
      onConditionFailed: () => notFound("api key", id),
    },
    { op: { Delete: { TableName: db.table, Key: hashItemKey(meta.hash) } } },
  ]);
}
