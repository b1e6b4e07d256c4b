import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand } from "@aws-sdk/lib-dynamodb";
import { Hono } from "hono";
import { handle } from "hono/aws-lambda";

/** The floor for init time and bundle size: a bare Hono app doing one GetItem, nothing else. */
const doc = DynamoDBDocumentClient.from(new DynamoDBClient({}));
const app = new Hono().get("/items/:id", async (c) => {
  const out = await doc.send(
    new GetCommand({ TableName: process.env.TABLE_NAME ?? "t", Key: { pk: c.req.param("id"), sk: "x" } }),
  );
  return c.json(out.Item ?? null);
});
export const handler = handle(app);
