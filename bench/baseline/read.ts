import { BatchGetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { Hono } from "hono";
import type { Db } from "@invoicing/core/db/dynamodb";
import { entityKey, userPk } from "@invoicing/core/db/keys";
import { keyItemKey, parseKey } from "@invoicing/core/keys/api-keys";

/**
 * The floor of GET /invoices/{id} for the throughput bench: a bare Hono app doing the DynamoDB work
 * that GET must do and nothing else. One consistent BatchGetItem of the bearer key's item and the
 * invoice record (the key layout is core's, so both servers read the very same two items), the key
 * item checked to name the key's user, and the record answered as JSON; beside it, at the same time,
 * the one write a request of a rate-limited user must make (API.md section 16: every authenticated
 * request counts against its user's limit), an UpdateItem of a bucket item returning it, as our
 * limiter's does. No middleware, no schema, no resource shaping, no limiter logic: what our server
 * adds on top of this is what the bench's ratio shows. (Until 28 November the floor made no write,
 * so the ratio also counted the limiter's request itself.)
 */
export function baselineReadApp(db: Db): Hono {
  return new Hono().get("/invoices/:id", async (c) => {
    const claim = parseKey(c.req.header("Authorization")?.replace(/^Bearer /, "") ?? "");
    if (!claim?.userId) return c.json({ error: "unauthorized" }, 401);
    const keyItem = keyItemKey(claim);
    const record = entityKey(claim.userId, "INVOICE", Number(c.req.param("id")));
    const [out] = await Promise.all([
      db.doc.send(
        new BatchGetCommand({ RequestItems: { [db.table]: { Keys: [keyItem, record], ConsistentRead: true } } }),
      ),
      // Its own item: the API's bucket (sk LIMITS) is left to the API.
      db.doc.send(
        new UpdateCommand({
          TableName: db.table,
          Key: { pk: userPk(claim.userId), sk: "LIMITS#floor" },
          UpdateExpression: "SET #tat = :now",
          ExpressionAttributeNames: { "#tat": "tat" },
          ExpressionAttributeValues: { ":now": Date.now() },
          ReturnValues: "ALL_NEW",
        }),
      ),
    ]);
    const items = out.Responses?.[db.table] ?? [];
    const key = items.find((item) => item.pk === keyItem.pk);
    if (key?.userId !== claim.userId) return c.json({ error: "unauthorized" }, 401);
    const invoice = items.find((item) => item.pk === record.pk && item.sk === record.sk);
    return invoice ? c.json(invoice) : c.json({ error: "not_found" }, 404);
  });
}
