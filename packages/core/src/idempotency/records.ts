/**
 * Idempotency-key records (docs/idempotency.md explains the design).
 *
 * One item per (user, key): pk = USER#<userId>, sk = IDEMPOTENCY#<sha256(key)>. Its life:
 *
 *   (none) --claim--> in_progress --effect's own transaction--> committed --response stored--> completed
 *                          \--error before any change: deleted (the key is free again)
 *
 * The step to `committed` is a write that joins the TransactWriteItems of the change itself (the
 * commit hook below), so the record says "done" exactly when the change is done: a crash at any
 * point leaves a record that tells the truth, and a retry never performs the change a second time.
 */
import { createHash, randomUUID } from "node:crypto";
import type { Ctx } from "../deps";
import { nowIso } from "../deps";
import { commit, type CommitHook, type Write } from "../db/commit";
import { userPk } from "../db/keys";
import { DomainError } from "../errors";

/** Keys live 24 hours from their first use (Stripe's window). */
const KEY_TTL_SECONDS = 24 * 60 * 60;
/**
 * How long a claim is honoured without news from its owner. Longer than the API function's timeout
 * (25 s, infra/api.ts), so a live request never loses its claim; after it, a retry may take over a
 * claim whose owner crashed before its change (the owner's late commit then fails its condition).
 */
export const LEASE_MS = 30_000;

type KeyState = "in_progress" | "committed" | "completed";

/** The response of the first request, kept for replays: status, body and the headers that matter. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface KeyRecord {
  pk: string;
  sk: string;
  state: KeyState;
  /** Random token of the request holding the claim; every later write is conditioned on it. */
  owner: string;
  /** Hash of method, path and body: the same key with another request is refused. */
  fingerprint: string;
  /** Epoch milliseconds until which the owner's claim stands. */
  leaseUntil: number;
  /** Epoch seconds; the table's TTL attribute. DynamoDB deletes late, so reads check it too. */
  expiresAt: number;
  createdAt: string;
  /** Sort key of the record the change produced (its first commit's result), to rebuild the response. */
  resultRef?: string;
  response?: StoredResponse;
}

/** A claim this request holds. */
export interface Claim {
  key: { pk: string; sk: string };
  owner: string;
}

type KeyCtx = Pick<Ctx, "db" | "clock" | "userId">;

export const recordKey = (userId: string, idempotencyKey: string) => ({
  pk: userPk(userId),
  // Hashed: the key is the client's string, possibly long or sensitive; the hash is fixed-size.
  sk: `IDEMPOTENCY#${createHash("sha256").update(idempotencyKey).digest("hex")}`,
});

// state, owner … are DynamoDB reserved words or close to it: every attribute goes through a name.
const NAMES = {
  "#pk": "pk",
  "#state": "state",
  "#owner": "owner",
  "#leaseUntil": "leaseUntil",
  "#expiresAt": "expiresAt",
} as const;

/** The claim failed: the record another request left (returned with the failed condition). */
class KeyHeld extends Error {
  constructor(readonly record: KeyRecord | undefined) {
    super("idempotency key held");
  }
}

/**
 * Claims the key with one conditional Put. It succeeds when there is no record, when the record
 * expired (by our clock: TTL deletion lags), or when it is an in_progress claim whose lease ran out
 * (its owner died before its change, so nothing was done under the key). Otherwise the record
 * that stands is returned for the caller to judge.
 */
export async function claimKey(
  ctx: KeyCtx,
  idempotencyKey: string,
  fingerprint: string,
): Promise<{ claimed: Claim } | { existing: KeyRecord }> {
  const now = ctx.clock();
  const key = recordKey(ctx.userId, idempotencyKey);
  const owner = randomUUID();
  const record: KeyRecord = {
    ...key,
    state: "in_progress",
    owner,
    fingerprint,
    leaseUntil: now.getTime() + LEASE_MS,
    expiresAt: epochSeconds(now) + KEY_TTL_SECONDS,
    createdAt: nowIso(ctx),
  };
  try {
    // No commit hook here: the claim is not part of any change.
    await commit({ db: ctx.db }, [
      {
        op: {
          Put: {
            TableName: ctx.db.table,
            Item: record,
            ConditionExpression:
              "attribute_not_exists(#pk) OR #expiresAt <= :nowS OR (#state = :inProgress AND #leaseUntil <= :nowMs)",
            ExpressionAttributeNames: pick("#pk", "#expiresAt", "#state", "#leaseUntil"),
            ExpressionAttributeValues: {
              ":nowS": epochSeconds(now),
              ":nowMs": now.getTime(),
              ":inProgress": "in_progress",
            },
          },
        },
        onConditionFailed: (old) => new KeyHeld(old as KeyRecord | undefined),
      },
    ]);
    return { claimed: { key, owner } };
  } catch (error) {
    if (error instanceof KeyHeld && error.record) return { existing: error.record };
    throw error;
  }
}

/**
 * The hook for a request that holds a claim: every change it commits also marks the record
 * committed, in the same transaction, on condition that the claim is still this request's. A claim
 * taken over after its lease ran out therefore makes the late change fail as a whole (409).
 * The first committed result that is a record of this user is remembered as the response's subject.
 */
export function claimHook(ctx: KeyCtx, claim: Claim): CommitHook {
  return {
    writeFor(result: unknown): Write {
      const ref = resultRefOf(ctx.userId, result);
      return {
        op: {
          Update: {
            TableName: ctx.db.table,
            Key: claim.key,
            UpdateExpression: ref
              ? "SET #state = :committed, #ref = if_not_exists(#ref, :ref)"
              : "SET #state = :committed",
            ConditionExpression: "#owner = :owner",
            ExpressionAttributeNames: { ...pick("#state", "#owner"), ...(ref ? { "#ref": "resultRef" } : {}) },
            ExpressionAttributeValues: {
              ":committed": "committed",
              ":owner": claim.owner,
              ...(ref ? { ":ref": ref } : {}),
            },
          },
        },
        onConditionFailed: () =>
          new DomainError("idempotency_key_in_use", "a retry with the same Idempotency-Key took this request's place"),
      };
    },
  };
}

/**
 * The hook for a request that must not change anything (its key is in use, or was used for another
 * request) but whose other errors come first in API.md's order: it refuses at the moment of the
 * change, before any write is sent.
 */
export const refusingHook = (refusal: Error): CommitHook => ({
  writeFor() {
    throw refusal;
  },
});

/** Stores the response of a successful request. False when the claim is no longer this request's. */
export async function completeKey(ctx: KeyCtx, claim: Claim, response: StoredResponse): Promise<boolean> {
  return storeResponse(ctx, claim.key, response, "#owner = :owner", { ":owner": claim.owner });
}

/**
 * Stores a response rebuilt by a retry for a record whose owner died between its change and
 * storing the response. Conditioned on the record being unchanged since it was read.
 */
export async function completeRecovered(ctx: KeyCtx, record: KeyRecord, response: StoredResponse): Promise<boolean> {
  return storeResponse(ctx, { pk: record.pk, sk: record.sk }, response, "#owner = :owner AND #state = :committed", {
    ":owner": record.owner,
    ":committed": "committed",
  });
}

/**
 * After an error response: a claim with no change behind it is deleted, so a retry runs afresh.
 * A claim whose change did commit (the error came after it) must stay, or a retry would perform
 * the change again; its lease is ended instead, so a retry rebuilds the response at once.
 */
export async function releaseKey(ctx: KeyCtx, claim: Claim): Promise<void> {
  try {
    await commit({ db: ctx.db }, [
      {
        op: {
          Delete: {
            TableName: ctx.db.table,
            Key: claim.key,
            ConditionExpression: "#owner = :owner AND #state = :inProgress",
            ExpressionAttributeNames: pick("#owner", "#state"),
            ExpressionAttributeValues: { ":owner": claim.owner, ":inProgress": "in_progress" },
          },
        },
        onConditionFailed: (old) => new KeyHeld(old as KeyRecord | undefined),
      },
    ]);
  } catch (error) {
    if (!(error instanceof KeyHeld)) throw error;
    // Taken over by a retry, or committed: only the latter is ours to touch.
    if (error.record?.owner !== claim.owner || error.record.state !== "committed") return;
    await commit({ db: ctx.db }, [
      {
        op: {
          Update: {
            TableName: ctx.db.table,
            Key: claim.key,
            UpdateExpression: "SET #leaseUntil = :now",
            ConditionExpression: "#owner = :owner AND #state = :committed",
            ExpressionAttributeNames: pick("#leaseUntil", "#owner", "#state"),
            ExpressionAttributeValues: {
              ":now": ctx.clock().getTime(),
              ":owner": claim.owner,
              ":committed": "committed",
            },
          },
        },
        onConditionFailed: () => new KeyHeld(undefined),
      },
    ]).catch((e: unknown) => {
      if (!(e instanceof KeyHeld)) throw e;
    });
  }
}

/** True while the record's owner may still be working on it. */
export const isLeaseLive = (record: KeyRecord, now: Date): boolean => record.leaseUntil > now.getTime();

async function storeResponse(
  ctx: KeyCtx,
  key: { pk: string; sk: string },
  response: StoredResponse,
  condition: string,
  values: Record<string, unknown>,
): Promise<boolean> {
  try {
    await commit({ db: ctx.db }, [
      {
        op: {
          Update: {
            TableName: ctx.db.table,
            Key: key,
            UpdateExpression: "SET #state = :completed, #response = :response",
            ConditionExpression: condition,
            ExpressionAttributeNames: { ...pick("#state", "#owner"), "#response": "response" },
            ExpressionAttributeValues: { ":completed": "completed", ":response": response, ...values },
          },
        },
        onConditionFailed: () => new KeyHeld(undefined),
      },
    ]);
    return true;
  } catch (error) {
    if (error instanceof KeyHeld) return false;
    throw error;
  }
}

/** A committed result that is one of this user's records (has its pk and a sort key) names it. */
function resultRefOf(userId: string, result: unknown): string | undefined {
  if (typeof result !== "object" || result === null) return undefined;
  const { pk, sk } = result as { pk?: unknown; sk?: unknown };
  return pk === userPk(userId) && typeof sk === "string" ? sk : undefined;
}

const epochSeconds = (date: Date): number => Math.floor(date.getTime() / 1000);

function pick<K extends keyof typeof NAMES>(...names: K[]): Pick<typeof NAMES, K> {
  return Object.fromEntries(names.map((n) => [n, NAMES[n]])) as Pick<typeof NAMES, K>;
}
