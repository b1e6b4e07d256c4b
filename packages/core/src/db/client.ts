import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { CoreConfig } from "../config";

/** The table handle every repository takes: the document client and the table's name. */
export interface Db {
  doc: DynamoDBDocumentClient;
  table: string;
}

export function createDb(config: Pick<CoreConfig, "tableName" | "dynamoEndpoint" | "region">): Db {
  const local = Boolean(config.dynamoEndpoint);
  const client = new DynamoDBClient({
    region: config.region,
    endpoint: config.dynamoEndpoint,
    // DynamoDB Local accepts any credentials; on AWS the Lambda role's are used.
    credentials: local ? { accessKeyId: "local", secretAccessKey: "local" } : undefined,
    maxAttempts: 4,
  });
  const doc = DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
  });
  return { doc, table: config.tableName };
}
