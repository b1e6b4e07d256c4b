import { randomUUID } from "node:crypto";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { createDb, type Db } from "@invoicing/core/db/dynamodb";
import { ensureTable } from "@invoicing/local/bootstrap";

/**
 * A new, empty table `<prefix>-<random id>` in the DynamoDB Local at `endpoint`, and a client of it.
 * Each test file (env.ts) and each bench world (bench/world.ts) makes its own, so one DynamoDB Local
 * serves them all and none sees another's records or jobs.
 */
export async function createFreshTable(endpoint: string, prefix: string): Promise<{ tableName: string; db: Db }> {
  const tableName = `${prefix}-${randomUUID()}`;
  const client = new DynamoDBClient({
    endpoint,
    region: "local",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
  try {
    await ensureTable(client, tableName);
  } finally {
    client.destroy();
  }
  return { tableName, db: createDb({ tableName, dynamoEndpoint: endpoint, region: "local" }) };
}
