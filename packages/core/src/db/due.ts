import { QueryCommand, type QueryCommandOutput } from "@aws-sdk/lib-dynamodb";
import type { Db } from "./dynamodb";
import { DUE_SHARDS, dueAtItsTime, duePartition, type DueJob } from "./keys";

/**
 * What a job has to do: the records on its sparse byDue list whose time has come, read shard by
 * shard and page by page. A job's reads grow with the work due, never with the table.
 * Due means at or before now (≤), or before now (<), as keys.ts isDue says for the job; `shard`
 * reads that shard only.
 */
export async function* dueItems(
  db: Db,
  job: DueJob,
  now: string,
  options: { shard?: number } = {},
): AsyncGenerator<Record<string, unknown>> {
  // dueSk = "<ISO time>#<userId>#<sk>": "<now>#…" sorts after "<now>" and before "<now>$".
  const bound = dueAtItsTime(job) ? `${now}$` : now;
  const shards = options.shard === undefined ? Array.from({ length: DUE_SHARDS }, (_, i) => i) : [options.shard];
  for (const shard of shards) {
    let startKey: Record<string, unknown> | undefined;
    do {
      const out: QueryCommandOutput = await db.doc.send(
        new QueryCommand({
          TableName: db.table,
          IndexName: "byDue",
          KeyConditionExpression: "duePk = :p AND dueSk < :bound",
          ExpressionAttributeValues: { ":p": duePartition(job, shard), ":bound": bound },
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of out.Items ?? []) yield item;
      startKey = out.LastEvaluatedKey;
    } while (startKey);
  }
}
