import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { Deps } from "../deps";
import type { Write } from "../db/commit";
import { userPk } from "../db/keys";
import { DomainError } from "../errors";

/**
 * The per-user email quota: at most `emailDailyQuota` (EMAIL_DAILY_QUOTA, default 200) emails queued
 * in any 24 hours. It keeps one tenant from making the operator's SES identity send unlimited mail
 * (`send` takes any `to`; schedules auto-send).
 *
 * Counted in DynamoDB, per user, in ONE item holding a count per hour (`hours`, "YYYYMMDDHH" →
 * emails queued in that hour, business time). Each change that queues emails carries this item's
 * Put in its own transaction, conditioned on the version it read: the email exists if and only if
 * it was counted, and two concurrent sends cannot both take the last place (the loser's transaction
 * fails and it reads again — EmailQuotaRaced).
 *
 * Precision: hourly buckets, each with the time of the last email queued in it (`latest`). A bucket's
 * emails count until 24 hours after its last one, so any 24-hour interval holds at most the quota
 * (never more), and a place frees up at most an hour later than an exact sliding window would free
 * it. Retry-After is the time until the oldest bucket whose leaving brings the count under the quota
 * leaves the window: never more than 24 hours.
 *
 * Counting without reading (the reminders job, reserveWithoutReading): the item also keeps `used`,
 * the sum of its buckets, which is never less than what the window holds (buckets that left the
 * window stay counted until a write that read the item drops them). So "used < quota" is a condition
 * DynamoDB can check by itself: an email counted under it fits exactly as well as when decided from
 * a read. When it does not hold, the failed write returns the item, and the caller decides from it.
 */
export const DEFAULT_EMAIL_DAILY_QUOTA = 200;
const HOUR_MS = 3_600_000;
const WINDOW_MS = 24 * HOUR_MS;

export interface QuotaItem {
  pk: string;
  sk: "EMAILQUOTA";
  type: "emailQuota";
  /** "YYYYMMDDHH" (UTC) → emails queued in that hour. */
  hours: Record<string, number>;
  /**
   * "YYYYMMDDHH" → when the last email of that hour was queued (epoch ms). Absent for buckets written
   * before it was kept: those count until the end of their hour plus 24 hours, as they did then.
   */
  latest?: Record<string, number>;
  /**
   * The sum of `hours` (each write keeps it so): at least the emails in the window. Absent on items
   * written before it was kept: reserveWithoutReading then refuses to decide, and the caller reads.
   */
  used?: number;
  version: number;
  /**
   * The user's own quota, when the operator set one (limits/user-limits.ts keeps this copy of the
   * limits item's): decides instead of EMAIL_DAILY_QUOTA.
   */
  emailsPerDay?: number;
  /**
   * TTL: the item goes once its last bucket left the window. Absent while the item holds the user's
   * own quota (it must outlive quiet days); its counting update then refuses to decide
   * (reserveWithoutReading's condition needs it), and the caller decides from the item.
   */
  expiresAt?: number;
}

export const emailQuotaKey = (userId: string) => ({ pk: userPk(userId), sk: "EMAILQUOTA" as const });

/** Refused: the quota is used up. A DomainError, so the HTTP layer answers 429 with Retry-After. */
export class EmailQuotaExceeded extends DomainError {
  constructor(quota: number, retryAfterSeconds: number) {
    super(
      "email_quota_exceeded",
      `at most ${quota} emails in any 24 hours; retry in ${retryAfterSeconds} s`,
      retryAfterSeconds,
    );
  }
}

/**
 * Another change counted an email between this one's read and its commit: read and decide again.
 * A 503 should the retries run out (many concurrent sends of one user).
 */
export class EmailQuotaRaced extends DomainError {
  constructor() {
    super("service_unavailable", "the email quota changed meanwhile; retry");
  }
}

const hourOf = (ms: number): number => Math.floor(ms / HOUR_MS);
const bucketName = (hour: number): string => new Date(hour * HOUR_MS).toISOString().slice(0, 13).replace(/[-T]/g, "");
const bucketHour = (name: string): number =>
  hourOf(Date.UTC(+name.slice(0, 4), +name.slice(4, 6) - 1, +name.slice(6, 8), +name.slice(8, 10)));

type QuotaDeps = Pick<Deps, "db" | "emailDailyQuota">;

/**
 * Takes `count` places of `userId`'s quota at `at` (business time: the request's or job's now):
 * the Write to commit with the change that queues the emails. Throws EmailQuotaExceeded when they
 * do not fit; the Write's condition fails with EmailQuotaRaced when the item changed meanwhile.
 */
export async function reserveEmails(deps: QuotaDeps, userId: string, at: string, count = 1): Promise<Write> {
  return reserveFrom(deps, userId, await readEmailQuota(deps, userId), at, count);
}

/** The user's quota item as stored now (a consistent read), or undefined when there is none yet. */
async function readEmailQuota(deps: Pick<Deps, "db">, userId: string): Promise<QuotaItem | undefined> {
  const key = emailQuotaKey(userId);
  const read = await deps.db.doc.send(new GetCommand({ TableName: deps.db.table, Key: key, ConsistentRead: true }));
  return read.Item as QuotaItem | undefined;
}

/**
 * reserveEmails from the item as the caller knows it (`current`: read, or returned by a failed
 * write — EmailQuotaUndecided). The Write is conditioned on `current`'s version, so a stale
 * `current` never lets more through: it fails with EmailQuotaRaced, and the caller decides again.
 */
export function reserveFrom(
  deps: QuotaDeps,
  userId: string,
  current: QuotaItem | undefined,
  at: string,
  count = 1,
): Write {
  const quota = current?.emailsPerDay ?? deps.emailDailyQuota ?? DEFAULT_EMAIL_DAILY_QUOTA;
  const key = emailQuotaKey(userId);
  const nowMs = Date.parse(at);
  const now = hourOf(nowMs);
  // In the window: buckets whose last email is less than 24 hours old, and any later bucket (a job
  // run "as of" an earlier time).
  const kept = Object.entries(current?.hours ?? {})
    .map(([name, n]) => ({ name, n, last: current?.latest?.[name] ?? (bucketHour(name) + 1) * HOUR_MS }))
    .filter((b) => b.last + WINDOW_MS > nowMs)
    .sort((a, b) => a.last - b.last);
  const used = kept.reduce((sum, b) => sum + b.n, 0);
  if (used + count > quota) throw new EmailQuotaExceeded(quota, retryAfter(kept, used + count - quota, nowMs));

  const hours: Record<string, number> = Object.fromEntries(kept.map((b) => [b.name, b.n]));
  const latest: Record<string, number> = Object.fromEntries(kept.map((b) => [b.name, b.last]));
  const bucket = bucketName(now);
  hours[bucket] = (hours[bucket] ?? 0) + count;
  latest[bucket] = Math.max(latest[bucket] ?? nowMs, nowMs);
  const item: QuotaItem = {
    ...key,
    type: "emailQuota",
    hours,
    latest,
    used: used + count,
    version: (current?.version ?? 0) + 1,
    ...(current?.emailsPerDay !== undefined
      ? { emailsPerDay: current.emailsPerDay }
      : { expiresAt: Math.ceil((Math.max(...Object.values(latest)) + WINDOW_MS) / 1000) }),
  };
  return {
    op: {
      Put: {
        TableName: deps.db.table,
        Item: item,
        ConditionExpression: current ? "#version = :seen" : "attribute_not_exists(pk)",
        ...(current
          ? {
              ExpressionAttributeNames: { "#version": "version" },
              ExpressionAttributeValues: { ":seen": current.version },
            }
          : {}),
      },
    },
    onConditionFailed: () => new EmailQuotaRaced(),
  };
}

/**
 * reserveWithoutReading could not decide from the item's running count (the count reached the
 * quota, the user has no item yet or one from before `used` was kept, or the job runs "as of" an
 * earlier time than the item's last email): decide from `item`, the item as the failed write found
 * it (reserveFrom), a write conditioned on its version.
 */
export class EmailQuotaUndecided extends Error {
  constructor(readonly item: QuotaItem | undefined) {
    super("the email quota's running count cannot decide; decide from the item");
    this.name = "EmailQuotaUndecided";
  }
}

/**
 * Takes `count` places of `userId`'s quota at `at` without reading the item: an Update adding to the
 * hour's bucket and to `used`, conditioned on `used + count <= quota`. Since `used` never counts
 * fewer emails than the window holds, what this lets through fits exactly as reserveFrom would decide
 * it from a read. It moves `version` on, so a concurrent reserveFrom from an earlier read fails and
 * reads again. Its condition failing is EmailQuotaUndecided (with the item as it was), never a
 * refusal by itself: the running count may still hold buckets that left the window. An item holding
 * the user's own quota has no `expiresAt`, so the condition fails for it too and the caller decides
 * from the item, with that quota.
 */
export function reserveWithoutReading(deps: QuotaDeps, userId: string, at: string, count = 1): Write {
  const quota = deps.emailDailyQuota ?? DEFAULT_EMAIL_DAILY_QUOTA;
  const nowMs = Date.parse(at);
  return {
    op: {
      Update: {
        TableName: deps.db.table,
        Key: emailQuotaKey(userId),
        UpdateExpression:
          "SET #hours.#bucket = if_not_exists(#hours.#bucket, :zero) + :count, #latest.#bucket = :nowMs, " +
          "#used = #used + :count, #version = #version + :one, #expiresAt = :expiresAt",
        // The bucket's `latest` and the TTL only move forward: a run "as of" an earlier time decides
        // from the item instead.
        ConditionExpression:
          "#used <= :room AND (attribute_not_exists(#latest.#bucket) OR #latest.#bucket <= :nowMs) " +
          "AND #expiresAt <= :expiresAt",
        ExpressionAttributeNames: {
          "#hours": "hours",
          "#latest": "latest",
          "#bucket": bucketName(hourOf(nowMs)),
          "#used": "used",
          "#version": "version",
          "#expiresAt": "expiresAt",
        },
        ExpressionAttributeValues: {
          ":zero": 0,
          ":one": 1,
          ":count": count,
          ":room": quota - count,
          ":nowMs": nowMs,
          ":expiresAt": Math.ceil((nowMs + WINDOW_MS) / 1000),
        },
      },
    },
    onConditionFailed: (old) => new EmailQuotaUndecided(old as QuotaItem | undefined),
  };
}

/**
 * Seconds until enough of the oldest buckets (by their last email) left the window to free `needed`
 * places: at least 1, at most 24 hours (a bucket's last email is not in the future, unless a job ran
 * "as of" a later time than this request's; what it counted then still leaves within a day of now).
 */
function retryAfter(buckets: readonly { last: number; n: number }[], needed: number, nowMs: number): number {
  let freed = 0;
  // More asked at once than the quota holds never fits: then say when the window is empty.
  const leaving = buckets.find((bucket) => (freed += bucket.n) >= needed) ?? buckets.at(-1);
  const seconds = Math.ceil(((leaving?.last ?? nowMs) + WINDOW_MS - nowMs) / 1000);
  return Math.min(WINDOW_MS / 1000, Math.max(1, seconds));
}
