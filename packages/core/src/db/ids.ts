import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { Db } from "./client";
import { counterKey } from "./keys";

/**
 * Allocates the next value of a per-user counter (ids per kind: a user's first client is 1).
 * Ids may skip a value when the write that follows fails; invoice numbers never use this path
 * because they must be gapless (see invoices/finalize).
 */
export async function nextId(db: Db, userId: string, counter: string): Promise<number> {
  const out = await db.doc.send(
    new UpdateCommand({
      TableName: db.table,
      Key: counterKey(userId, counter),
      UpdateExpression: "ADD #v :one",
      ExpressionAttributeNames: { "#v": "value" },
      ExpressionAttributeValues: { ":one": 1 },
      ReturnValues: "UPDATED_NEW",
    }),
  );
  return Number(out.Attributes?.value);
}
