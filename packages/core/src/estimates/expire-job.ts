import type { Deps } from "../context";
import { commit } from "../db/commit";
import { dueItems } from "../db/due";
import { DomainError } from "../errors";
import type { JobResult } from "../jobs/registry";
import { estimateKey, estimateStatusKeys } from "./model";

/**
 * The `expire-estimates` job: a sent estimate whose validUntil is earlier than `now` becomes
 * expired. It reads only the byDue list of sent estimates with a validUntil (see model.ts's
 * expiryKeys). The write is conditioned on the record itself — still sent, validUntil still before
 * now — not on the index entry, which may lag a PATCH that moved validUntil; so a second or
 * concurrent run, or a stale entry, changes nothing.
 */
export async function runExpireEstimatesJob(deps: Deps, now: Date): Promise<JobResult> {
  const nowIso = now.toISOString();
  let changed = 0;
  let skipped = 0;
  for await (const due of dueItems(deps.db, "expire-estimates", nowIso, { inclusive: false })) {
    const userId = due.userId as string;
    const id = due.id as number;
    const { gsi1pk } = estimateStatusKeys(userId, "expired", id);
    try {
      await commit(deps, [
        {
          op: {
            Update: {
              TableName: deps.db.table,
              Key: estimateKey(userId, id),
              UpdateExpression:
                "SET #status = :expired, gsi1pk = :gsi1pk, updatedAt = :now, #version = #version + :one REMOVE duePk, dueSk",
              ConditionExpression: "#status = :sent AND validUntil < :now",
              ExpressionAttributeNames: { "#status": "status", "#version": "version" },
              ExpressionAttributeValues: {
                ":expired": "expired",
                ":sent": "sent",
                ":gsi1pk": gsi1pk,
                ":now": nowIso,
                ":one": 1,
              },
            },
          },
          onConditionFailed: () =>
            new DomainError("invalid_transition", "no longer a sent estimate past its validUntil"),
        },
      ]);
      changed++;
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      skipped++; // answered, converted, deleted, given a later validUntil, or expired by a concurrent run
    }
  }
  return { job: "expire-estimates", now: nowIso, changed, skipped };
}
