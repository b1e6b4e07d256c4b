import { DescribeTableCommand } from "@aws-sdk/client-dynamodb";
import { Hono } from "hono";
import type { AppEnv } from "../env";

/** GET /health: 200 once the table answers (a 503 problem otherwise, through onError). */
export const health = new Hono<AppEnv>().get("/health", async (c) => {
  const { db } = c.get("deps");
  await db.doc.send(new DescribeTableCommand({ TableName: db.table }));
  return c.json({ status: "ok" });
});
