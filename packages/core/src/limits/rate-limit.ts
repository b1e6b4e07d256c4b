import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import type { Db } from "../db/dynamodb";
import { DomainError } from "../errors";

/**
 * Request rate limits, shared by every Lambda container: a token bucket per user (and per public
 * token) kept in the table, in the form of GCRA (the generic cell rate algorithm), so one
 * conditional UpdateItem both checks and takes a place. docs/limits.md weighs it against the
 * alternatives.
 *
 * The bucket is one number, `tat` (the "theoretical arrival time", epoch ms): the moment the bucket
 * would be full again if nothing more came. A request at `now` fits when `tat - now <= tau`, and
 * then moves `tat` on by one emission interval `T = 1000 / limit` ms (from `now` when the bucket was
 * full, `tat < now`). With `tau = (burst - 1) × T`, a quiet user may send `burst` requests at once,
 * and over ANY window of W seconds at most `burst + W × limit` get through — whichever container
 * serves them, because DynamoDB applies the conditional updates of one item one after another. A
 * user sending faster than the limit gets one place every T: `limit × W` over W seconds (the bucket
 * never overflows while it is being emptied). So API.md's bound "at least limit × 10, at most
 * limit × 10 + burst over any 10 s" holds across containers by construction, not by estimate.
 *
 * Each container remembers, per bucket, the last `tat` it saw and, after a refusal (or after taking
 * the last place), until when the bucket is full: a user past its limit is refused from memory (no
 * DynamoDB request) until a place can be free again, so a hot user's excess costs no table write
 * and no wait — 429s, not sleeping Lambdas. Such a refusal is never wrong: `tat` only moves forward
 * (the refused were not counted), so a place cannot be free before the remembered moment. When
 * places free again, the container asks for no more of them at once than can have freed
 * (knownRefusal), so the excess does not come back as a herd of table requests.
 *
 * A user's own limit (`users limits`, limits/user-limits.ts) is on the same item as
 * `requestsPerSecond`; each update is conditioned on the limit the container assumed, so an
 * override takes effect on the very next request: a mismatch hands back the item, and the update is
 * made again with its limit.
 */

/** The configured defaults when API_RATE_LIMIT / PUBLIC_RATE_LIMIT are unset (API.md section 16). */
export const DEFAULT_API_RATE_LIMIT = 50;
export const DEFAULT_PUBLIC_RATE_LIMIT = 10;

/** A bucket's item: the user's limits item (USER#<id> / LIMITS) or a public token's. */
export interface BucketKey {
  pk: string;
  sk: string;
}

export interface RateLimitOptions {
  /** The default requests per second (API_RATE_LIMIT / PUBLIC_RATE_LIMIT). */
  perSecond: number;
  /** TTL for buckets nobody needs to keep (a public token's): seconds after the bucket is full again. */
  expireAfterSeconds?: number;
}

/** Refused: 429 rate_limited with Retry-After. */
export class RateLimited extends DomainError {
  constructor(limit: number, retryAfterSeconds: number) {
    super(
      "rate_limited",
      `at most ${limit} requests per second (bursts of ${burstOf(limit)}); retry in ${retryAfterSeconds} s`,
      retryAfterSeconds,
    );
  }
}

/** Bursts of twice the limit (API.md section 16). */
export const burstOf = (limit: number): number => 2 * limit;

/** A bucket of `limit` a second: one place every `interval` ms, `tau` ms of slack (the burst). */
function shapeOf(limit: number): { interval: number; tau: number } {
  const interval = 1000 / limit;
  return { interval, tau: (burstOf(limit) - 1) * interval };
}

interface Known {
  /** The last `tat` seen in the table (epoch ms); 0 when unknown. */
  tat: number;
  /** The item's own limit as last seen; undefined: the default applies. */
  own?: number;
  /** Refused until then (epoch ms) without asking the table. */
  fullUntil: number;
}

/** Per container: what it last saw of each bucket. Bounded, oldest first out. */
const known = new Map<string, Known>();
const KNOWN_MAX = 10_000;

function remember(id: string, state: Known): void {
  known.delete(id);
  known.set(id, state);
  if (known.size > KNOWN_MAX) known.delete(known.keys().next().value!);
}

/** Per bucket: this container's conditional updates in flight (takeRequest). */
const inFlight = new Map<string, number>();

/** Only for tests that need a container with no memory (a fresh Lambda). */
export function forgetRateLimits(): void {
  known.clear();
}

const bucketId = (key: BucketKey): string => `${key.pk}\u0000${key.sk}`;

/**
 * The refusal this container already knows for the bucket, or undefined: lets a caller answer 429
 * without asking the table or doing anything else. Known: the bucket is empty until a moment this
 * container saw; or it was last seen full and this container already asks the table for as many
 * places as can have freed since (below).
 */
export function knownRefusal(key: BucketKey, options: RateLimitOptions, now: Date): RateLimited | undefined {
  const id = bucketId(key);
  const state = known.get(id);
  const nowMs = now.getTime();
  if (!state || state.fullUntil === 0) return undefined;
  const limit = state.own ?? options.perSecond;
  if (state.fullUntil > nowMs) return new RateLimited(limit, retryAfter(state.fullUntil, nowMs));
  // A bucket last seen full frees one place at `fullUntil` and one more every interval after it, so
  // this container asks the table with at most that many requests at once and refuses the others
  // from memory. Else every request arriving while the table answers would ask too: a herd each time
  // a place frees, as large as the user's rate times the table's latency, which a slower table makes
  // larger still. Such a refusal is wrong only if a request in flight fails for another reason or
  // the limit was raised meanwhile: Retry-After 1 then.
  const free = Math.min(burstOf(limit), Math.floor((nowMs - state.fullUntil) / shapeOf(limit).interval) + 1);
  if ((inFlight.get(id) ?? 0) >= free) return new RateLimited(limit, 1);
  return undefined;
}

/** At most this many conditional updates per request (the form guessed wrong, the limit changed). */
const ATTEMPTS = 4;

/**
 * Takes one place in the bucket at `key`, or throws RateLimited. One conditional UpdateItem on the
 * common path; none when this container already knows the bucket is empty.
 */
export async function takeRequest(db: Db, key: BucketKey, options: RateLimitOptions, now: Date): Promise<void> {
  const id = bucketId(key);
  const nowMs = now.getTime();
  const refused = knownRefusal(key, options, now);
  if (refused) throw refused;
  const state: Known = known.get(id) ?? { tat: 0, fullUntil: 0 };
  inFlight.set(id, (inFlight.get(id) ?? 0) + 1);
  try {
    await askTable(db, key, id, options, nowMs, state);
  } finally {
    const left = (inFlight.get(id) ?? 1) - 1;
    if (left > 0) inFlight.set(id, left);
    else inFlight.delete(id);
  }
}

/** The conditional updates of takeRequest: one on the common path, up to ATTEMPTS. */
async function askTable(
  db: Db,
  key: BucketKey,
  id: string,
  options: RateLimitOptions,
  nowMs: number,
  state: Known,
): Promise<void> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const limit = state.own ?? options.perSecond;
    const { interval, tau } = shapeOf(limit);
    // At `tat` = now both forms are right; it must take the one whose condition holds there
    // (BETWEEN is inclusive, `tat < :now` is not), or every attempt fails the same way.
    const busy = state.tat >= nowMs;
    try {
      const out = await db.doc.send(
        new UpdateCommand({
          TableName: db.table,
          Key: key,
          ...update(busy, { nowMs, interval, tau, own: state.own }, options.expireAfterSeconds),
          ReturnValues: "ALL_NEW",
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
      );
      // The place taken may have been the last one: then the next is refused from memory until one
      // frees (at most one interval away), not asked of the table.
      const tat = Number(out.Attributes?.tat ?? 0);
      const own = ownLimit(out.Attributes);
      const { tau: tauNow } = shapeOf(own ?? options.perSecond);
      remember(id, { tat, own, fullUntil: tat - nowMs > tauNow ? tat - tauNow : 0 });
      return;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const old = error.Item ? unmarshall(error.Item as Parameters<typeof unmarshall>[0]) : undefined;
      const own = ownLimit(old);
      const tat = Number(old?.tat ?? 0);
      if (own !== state.own) {
        // The operator changed the user's limit: decide again with it.
        Object.assign(state, { own, tat, fullUntil: 0 });
        continue;
      }
      if (tat - nowMs > tau) {
        const fullUntil = tat - tau;
        remember(id, { tat, own, fullUntil });
        throw new RateLimited(limit, retryAfter(fullUntil, nowMs));
      }
      // The other form applies (the bucket emptied or filled meanwhile).
      Object.assign(state, { tat: busy ? 0 : tat });
    }
  }
  // Still contended after every attempt: refuse this one rather than wait (it counted nothing).
  throw new RateLimited(state.own ?? options.perSecond, 1);
}

/** The conditional update taking one place: from `tat` when the bucket is in use, else from now. */
function update(
  busy: boolean,
  at: { nowMs: number; interval: number; tau: number; own?: number },
  expireAfterSeconds: number | undefined,
) {
  const limitHolds = at.own === undefined ? "attribute_not_exists(#own)" : "#own = :own";
  const names: Record<string, string> = { "#tat": "tat", "#own": "requestsPerSecond" };
  const values: Record<string, number> = { ":now": at.nowMs };
  if (at.own !== undefined) values[":own"] = at.own;
  let set: string;
  let condition: string;
  if (busy) {
    set = "#tat = #tat + :interval";
    condition = `#tat BETWEEN :now AND :latest AND ${limitHolds}`;
    values[":interval"] = at.interval;
    values[":latest"] = at.nowMs + at.tau;
  } else {
    set = "#tat = :next";
    condition = `(attribute_not_exists(#tat) OR #tat < :now) AND ${limitHolds}`;
    values[":next"] = at.nowMs + at.interval;
  }
  if (expireAfterSeconds !== undefined) {
    // Far enough ahead for any `tat` this update can leave (at most now + burst intervals).
    set += ", #expiresAt = :expiresAt";
    names["#expiresAt"] = "expiresAt";
    values[":expiresAt"] = Math.ceil((at.nowMs + at.tau + at.interval) / 1000) + expireAfterSeconds;
  }
  return {
    UpdateExpression: `SET ${set}`,
    ConditionExpression: condition,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

function ownLimit(item: Record<string, unknown> | undefined): number | undefined {
  const value = item?.requestsPerSecond;
  return typeof value === "number" && value > 0 ? value : undefined;
}

/** Whole seconds until `at`, at least 1 (API.md: Retry-After ≥ 1). */
const retryAfter = (at: number, nowMs: number): number => Math.max(1, Math.ceil((at - nowMs) / 1000));
