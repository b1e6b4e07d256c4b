import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { Db } from "./dynamodb";
import { userPk } from "./keys";

/**
 * Every item of a user whose sort key starts with `prefix` (an invoice's payments or reminders, the
 * API keys), page after page of the one Query, in sort-key order (`newestFirst`: reversed).
 * For the short lists a response or a rule reads whole; a long list is paginated (pagination.ts).
 */
export async function* userItems<T>(
  db: Db,
  userId: string,
  prefix: string,
  options: { consistent?: boolean; newestFirst?: boolean } = {},
): AsyncGenerator<T> {
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await db.doc.send(
      new QueryCommand({
        TableName: db.table,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
        ExpressionAttributeValues: { ":pk": userPk(userId), ":prefix": prefix },
        ConsistentRead: options.consistent,
        ScanIndexForward: options.newestFirst ? false : undefined,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of out.Items ?? []) yield item as T;
    startKey = out.LastEvaluatedKey;
  } while (startKey);
}

/** userItems, all of them in one array. */
export async function allUserItems<T>(
  db: Db,
  userId: string,
  prefix: string,
  options: { consistent?: boolean; newestFirst?: boolean } = {},
): Promise<T[]> {
  const items: T[] = [];
  for await (const item of userItems<T>(db, userId, prefix, options)) items.push(item);
  return items;
}
