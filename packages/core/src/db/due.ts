import { QueryCommand, type QueryCommandOutput } from "@aws-sdk/lib-dynamodb";
import type { Db } from "./dynamodb";
import { DUE_SHARDS, dueAtItsTime, duePartition, type DueJob } from "./keys";

/**
 * What a job has to do: the records on its sparse byDue list whose time has come, read shard by
 * shard and page by page. A job's reads grow with the work due, never with the table.
 * Due means at or before now (≤), or before now (<), as keys.ts isDue says for the job; `shard`
 * reads that shard only; `from` (a dueSk, or a time: see dueFrom) leaves out what sorts before it.
 */
export async function* dueItems(
  db: Db,
  job: DueJob,
  now: string,
  options: { shard?: number; from?: string } = {},
): AsyncGenerator<Record<string, unknown>> {
  // dueSk = "<ISO time>#<userId>#<sk>": "<now>#…" sorts after "<now>" and before "<now>$".
  const bound = dueFrom(job, now);
  const shards = options.shard === undefined ? Array.from({ length: DUE_SHARDS }, (_, i) => i) : [options.shard];
  for (const shard of shards) {
    let startKey: Record<string, unknown> | undefined;
    do {
      const out: QueryCommandOutput = await db.doc.send(
        new QueryCommand({
          TableName: db.table,
          IndexName: "byDue",
          // No dueSk equals a bound ("<time>" or "<time>$"), so BETWEEN's inclusive ends are < and ≥.
          KeyConditionExpression:
            options.from === undefined
              ? "duePk = :p AND dueSk < :bound"
              : "duePk = :p AND dueSk BETWEEN :from AND :bound",
          ExpressionAttributeValues: {
            ":p": duePartition(job, shard),
            ":bound": bound,
            ...(options.from === undefined ? {} : { ":from": options.from }),
          },
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of out.Items ?? []) yield item;
      startKey = out.LastEvaluatedKey;
    } while (startKey);
  }
}

/**
 * The first dueSk NOT due at `now` for `job` (what a run at `now` does not take): a later run that
 * reads `from` it takes only what came due after `now`.
 */
export const dueFrom = (job: DueJob, now: string): string => (dueAtItsTime(job) ? `${now}$` : now);
