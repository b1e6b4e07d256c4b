import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { Hono } from "hono";
import { DomainError } from "@invoicing/core/errors";
import type { AppEnv } from "../http/app-env";
import { describe } from "../http/describe";
import { Health } from "../schemas/resources";

/**
 * GET /health: 200 once the table answers. Anything else (unreachable, throttled, a missing
 * table) means "not healthy yet": 503 with Retry-After, never a 500. The probe is an item read (of a
 * key nothing stores), the very path requests take and all the function's role allows: no
 * DescribeTable (infra/storage.ts grants item-level actions only).
 */
export const health = new Hono<AppEnv>().get(
  "/health",
  describe({
    operationId: "getHealth",
    tag: "Service",
    summary: "Health check",
    description: "200 once the table is reachable.",
    success: { status: 200, description: "Healthy.", schema: Health },
    public: true,
  }),
  async (c) => {
    const { db } = c.get("deps");
    try {
      await db.doc.send(
        new GetCommand({ TableName: db.table, Key: { pk: "HEALTH", sk: "HEALTH" }, ProjectionExpression: "pk" }),
      );
    } catch {
      throw new DomainError("service_unavailable", "the database is not reachable yet");
    }
    return c.json({ status: "ok" });
  },
);
