import { GetCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import type { Deps } from "../deps";
import type { Db } from "../db/dynamodb";
import { userPk } from "../db/keys";
import { DEFAULT_EMAIL_DAILY_QUOTA, emailQuotaKey } from "../email/quota";
import { DEFAULT_API_RATE_LIMIT, type BucketKey } from "./rate-limit";

/**
 * A user's limits (API.md section 16): requests per second on every authenticated route together,
 * and emails per 24 hours. The defaults come from the configuration (API_RATE_LIMIT,
 * EMAIL_DAILY_QUOTA); the operator may give a user its own (`npm run users -- limits`).
 *
 * One item per user, `USER#<id>` / `LIMITS`: the user's own limits, when set, and the user's
 * request bucket (`tat`, limits/rate-limit.ts) — on the same item, so the bucket's conditional
 * update checks the limit it assumed and an override takes effect on the next request. The email
 * quota's own item (email/quota.ts) carries a copy of `emailsPerDay`, written here in the same
 * transaction, because its counting update (the reminders job's) can only compare with what is on
 * its own item.
 */

export const userLimitsKey = (userId: string): BucketKey => ({ pk: userPk(userId), sk: "LIMITS" });

/** A public token's request bucket: its own partition, gone a minute after it is full again. */
export const publicTokenBucketKey = (token: string): BucketKey => ({ pk: `PUBLICRATE#${token}`, sk: "RATE" });

export interface UserLimits {
  userId: string;
  requestsPerSecond: number;
  emailsPerDay: number;
}

type LimitDeps = Pick<Deps, "db" | "emailDailyQuota" | "rateLimits">;

/** The user's limits in force: its own where set, else the configured defaults. */
export async function readUserLimits(deps: LimitDeps, userId: string): Promise<UserLimits> {
  const out = await deps.db.doc.send(
    new GetCommand({ TableName: deps.db.table, Key: userLimitsKey(userId), ConsistentRead: true }),
  );
  return limitsOf(deps, userId, out.Item);
}

function limitsOf(deps: LimitDeps, userId: string, item: Record<string, unknown> | undefined): UserLimits {
  return {
    userId,
    requestsPerSecond:
      positive(item?.requestsPerSecond) ?? deps.rateLimits?.requestsPerSecond ?? DEFAULT_API_RATE_LIMIT,
    emailsPerDay: positive(item?.emailsPerDay) ?? deps.emailDailyQuota ?? DEFAULT_EMAIL_DAILY_QUOTA,
  };
}

/**
 * Sets the user's own limits (either or both) and returns the limits in force. One transaction: the
 * limits item, and the copy of `emailsPerDay` on the email quota item (created when missing, with
 * nothing counted).
 */
export async function setUserLimits(
  deps: LimitDeps,
  userId: string,
  change: { requestsPerSecond?: number; emailsPerDay?: number },
): Promise<UserLimits> {
  const db: Db = deps.db;
  const items = [];
  const sets: string[] = [];
  const values: Record<string, number> = {};
  if (change.requestsPerSecond !== undefined) {
    sets.push("requestsPerSecond = :rps");
    values[":rps"] = change.requestsPerSecond;
  }
  if (change.emailsPerDay !== undefined) {
    sets.push("emailsPerDay = :epd");
    values[":epd"] = change.emailsPerDay;
    items.push({
      Update: {
        TableName: db.table,
        Key: emailQuotaKey(userId),
        // A new quota item counts nothing yet; an existing one keeps its counts and moves its version
        // on, so a send that read it before this change decides again.
        UpdateExpression:
          "SET emailsPerDay = :epd, #type = :type, #hours = if_not_exists(#hours, :empty), " +
          "#latest = if_not_exists(#latest, :empty), #used = if_not_exists(#used, :zero), " +
          "#version = if_not_exists(#version, :zero) + :one REMOVE #expiresAt",
        ExpressionAttributeNames: {
          "#type": "type",
          "#hours": "hours",
          "#latest": "latest",
          "#used": "used",
          "#version": "version",
          "#expiresAt": "expiresAt",
        },
        ExpressionAttributeValues: {
          ":epd": change.emailsPerDay,
          ":type": "emailQuota",
          ":empty": {},
          ":zero": 0,
          ":one": 1,
        },
      },
    });
  }
  if (sets.length > 0) {
    items.push({
      Update: {
        TableName: db.table,
        Key: userLimitsKey(userId),
        UpdateExpression: `SET ${sets.join(", ")}, #type = :limitsType`,
        ExpressionAttributeNames: { "#type": "type" },
        ExpressionAttributeValues: { ...values, ":limitsType": "limits" },
      },
    });
    await db.doc.send(new TransactWriteCommand({ TransactItems: items }));
  }
  return readUserLimits(deps, userId);
}

function positive(value: unknown): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : undefined;
}
