import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { CoreConfig } from "../config";

/** The table handle every repository takes: the document client and the table's name. */
export interface Db {
  doc: DynamoDBDocumentClient;
  table: string;
}

/**
 * The SDK's retry policy (docs/reliability.md). The SDK retries throttling, 5xx, connection
 * errors and timeouts by itself, with exponential backoff and jitter, up to `maxAttempts` in all;
 * what it still gives up on becomes 503 `service_unavailable` (db/errors.ts). Retrying a write is
 * safe because commit() makes every write apply at most once per call (db/commit.ts).
 *
 * Timeouts: without one, a lost response hangs the request until the Lambda dies (no problem+json,
 * no Retry-After). `throwOnRequestTimeout` is needed: without it the SDK only logs a warning.
 * On AWS, 4 attempts × 3 s plus backoff stay well inside the API function's 25 s. DynamoDB Local on
 * a busy machine (one JVM serving a whole test run) can be slow, and a timeout there buys nothing
 * but retries, so it gets a longer one.
 */
interface DbOptions {
  /** Per attempt, connection to response (ms). Default 3000 on AWS, 10000 with a local endpoint. */
  requestTimeoutMs?: number;
  /** Attempts in all, the first included (default 4). */
  maxAttempts?: number;
}

export function createDb(
  config: Pick<CoreConfig, "tableName" | "dynamoEndpoint" | "region">,
  options: DbOptions = {},
): Db {
  const local = Boolean(config.dynamoEndpoint);
  const requestTimeout = options.requestTimeoutMs ?? (local ? 10_000 : 3_000);
  const client = new DynamoDBClient({
    region: config.region,
    endpoint: config.dynamoEndpoint,
    // DynamoDB Local accepts any credentials; on AWS the Lambda role's are used.
    credentials: local ? { accessKeyId: "local", secretAccessKey: "local" } : undefined,
    maxAttempts: options.maxAttempts ?? 4,
    requestHandler: { requestTimeout, connectionTimeout: Math.min(requestTimeout, 2_000), throwOnRequestTimeout: true },
  });
  const doc = DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
  });
  return { doc, table: config.tableName };
}

/** What happened to an item, as a DynamoDB stream record names it (its `eventName`). */
export type StreamChange = "INSERT" | "MODIFY" | "REMOVE";
