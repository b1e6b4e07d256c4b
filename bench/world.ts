import { randomUUID } from "node:crypto";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { Deps } from "@invoicing/core/context";
import { createDb } from "@invoicing/core/db/client";
import { attachMeter, type Meter } from "@invoicing/core/db/metering";
import { createApiKey } from "@invoicing/core/keys/api-keys";
import { createApp } from "@invoicing/functions/app";
import { ensureTable } from "@invoicing/local/bootstrap";

/** A fresh table in the bench's DynamoDB Local, the real app over it, metered, with a settable clock. */
export interface World {
  deps: Deps;
  app: ReturnType<typeof createApp>;
  meter: Meter;
  clock: { now: Date };
  key: string;
  userId: string;
}

export async function createWorld(endpoint: string, now = "2026-11-22T09:30:00.000Z"): Promise<World> {
  const tableName = `bench-${randomUUID()}`;
  const client = new DynamoDBClient({
    endpoint,
    region: "local",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
  await ensureTable(client, tableName);
  client.destroy();
  const clock = { now: new Date(now) };
  const db = createDb({ tableName, dynamoEndpoint: endpoint, region: "local" });
  const deps: Deps = { db, clock: () => clock.now, publicBaseUrl: "http://localhost:3000" };
  const meter = attachMeter(db.doc);
  const userId = "bench";
  const { key } = await createApiKey(db, userId, "bench", clock.now);
  return { deps, app: createApp(deps), meter, clock, key, userId };
}
