import { DescribeTableCommand } from "@aws-sdk/client-dynamodb";
import { Hono } from "hono";
import { DomainError } from "@invoicing/core/errors";
import type { AppEnv } from "../http/env";
import { describe } from "../openapi/describe";
import { Health } from "../schemas/resources";

/**
 * GET /health: 200 once the table answers. Anything else (unreachable, throttled, a missing
 * table) means "not healthy yet": 503 with Retry-After, never a 500.
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
      await db.doc.send(new DescribeTableCommand({ TableName: db.table }));
    } catch {
      throw new DomainError("service_unavailable", "the database is not reachable yet");
    }
    return c.json({ status: "ok" });
  },
);
