import { QueryCommand, ScanCommand } from "@aws-sdk/lib-dynamodb";
import type { Deps } from "../deps";
import { userPk } from "../db/keys";
import { reconcile, type Reconciled } from "./aggregates";
import { factsOf } from "./contribution";

/**
 * Rebuilds a user's report aggregates from the records (docs/reports.md, "Backfill"): every
 * invoice, payment and credit note of the user, read with a consistent Query of its own sort-key
 * prefix, is reconciled exactly as the stream subscriber reconciles a change (aggregates.ts), a few
 * at a time. For a table that held records before the reports shipped, or whose stream records are
 * gone (older than 24 hours).
 *
 * Safe while the stream keeps applying changes, and safe to run again: the backfill and the stream
 * do the same thing — "count this record as of version v, unless its ledger entry counts v or a
 * newer one" — in one transaction conditioned on the ledger entry they read. Whichever comes first
 * with a version counts it; the other finds it counted; an older image (the backfill's read of a
 * record the stream has since counted newer, or a stream record delivered late) changes nothing.
 * A record created after the backfill's Query comes through the stream; one deleted after it,
 * too (its tombstone outlives any late image of it).
 */
interface BackfillResult {
  userId: string;
  /** Records that count (issued invoices, credit notes, payments other than needs_refund). */
  records: number;
  applied: number;
  alreadyCounted: number;
  unchanged: number;
}

const PREFIXES = ["INVOICE#", "CREDITNOTE#", "PAYMENT#"] as const;
const CONCURRENCY = 8;

export async function backfillReports(deps: Pick<Deps, "db" | "clock">, userId: string): Promise<BackfillResult> {
  const result: BackfillResult = { userId, records: 0, applied: 0, alreadyCounted: 0, unchanged: 0 };
  const tally = (outcome: Reconciled) => {
    if (outcome === "applied") result.applied++;
    else if (outcome === "already_counted") result.alreadyCounted++;
    else result.unchanged++;
  };
  for (const prefix of PREFIXES) {
    let start: Record<string, unknown> | undefined;
    do {
      const page = await deps.db.doc.send(
        new QueryCommand({
          TableName: deps.db.table,
          KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
          ExpressionAttributeValues: { ":pk": userPk(userId), ":prefix": prefix },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      const counted = (page.Items ?? []).filter((item) => factsOf(item) !== undefined);
      result.records += counted.length;
      for (let i = 0; i < counted.length; i += CONCURRENCY) {
        const outcomes = await Promise.all(
          counted.slice(i, i + CONCURRENCY).map((item) => reconcile(deps, userId, String(item.sk), { image: item })),
        );
        outcomes.forEach(tally);
      }
      start = page.LastEvaluatedKey;
    } while (start);
  }
  return result;
}

/**
 * Every user of the table, for a backfill of all: the one Scan in the code base, for a one-off
 * migration (a user is whoever has a PROFILE item, written with each API key).
 */
export async function allUsers(deps: Pick<Deps, "db">): Promise<string[]> {
  const users: string[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await deps.db.doc.send(
      new ScanCommand({
        TableName: deps.db.table,
        FilterExpression: "sk = :profile AND begins_with(pk, :user)",
        ExpressionAttributeValues: { ":profile": "PROFILE", ":user": "USER#" },
        ProjectionExpression: "pk",
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) users.push(String(item.pk).slice("USER#".length));
    start = page.LastEvaluatedKey;
  } while (start);
  return users.sort();
}
