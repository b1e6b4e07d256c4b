import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceNotFoundException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  type CreateTableCommandInput,
} from "@aws-sdk/client-dynamodb";
import { tableDefinition } from "@invoicing/core/db/table-definition";

/**
 * The CreateTable input for the table infra/storage.ts declares: the same definition object, turned
 * into the API's shape (SST does the equivalent when it deploys). Every GSI projects ALL attributes,
 * as sst.aws.Dynamo's indexes do by default.
 */
function createTableInput(tableName: string): CreateTableCommandInput {
  const d = tableDefinition;
  const keySchema = (hashKey: string, rangeKey?: string) => [
    { AttributeName: hashKey, KeyType: "HASH" as const },
    ...(rangeKey ? [{ AttributeName: rangeKey, KeyType: "RANGE" as const }] : []),
  ];
  return {
    TableName: tableName,
    BillingMode: "PAY_PER_REQUEST",
    AttributeDefinitions: Object.entries(d.fields).map(([name, type]) => ({
      AttributeName: name,
      AttributeType: type === "string" ? "S" : type === "number" ? "N" : "B",
    })),
    KeySchema: keySchema(d.primaryIndex.hashKey, d.primaryIndex.rangeKey),
    GlobalSecondaryIndexes: Object.entries(d.globalIndexes).map(([name, index]) => ({
      IndexName: name,
      KeySchema: keySchema(index.hashKey, "rangeKey" in index ? index.rangeKey : undefined),
      // As infra/storage.ts passes it to SST: the definition's projection, one source for both.
      Projection: { ProjectionType: index.projection === "keys-only" ? ("KEYS_ONLY" as const) : ("ALL" as const) },
    })),
    // The change stream the subscriber reads (events, webhooks, email): as infra declares it.
    StreamSpecification: { StreamEnabled: true, StreamViewType: streamViewType(d.stream) },
  };
}

const streamViewType = (stream: typeof tableDefinition.stream) =>
  (
    ({
      "new-and-old-images": "NEW_AND_OLD_IMAGES",
      "new-image": "NEW_IMAGE",
      "old-image": "OLD_IMAGE",
      "keys-only": "KEYS_ONLY",
    }) as const
  )[stream];

/**
 * Creates the table and its TTL setting when missing; when it exists, turns its stream on if a
 * table made before streams existed here lacks it.
 */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<"created" | "exists"> {
  try {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (!Table?.StreamSpecification?.StreamEnabled) {
      await client.send(
        new UpdateTableCommand({
          TableName: tableName,
          StreamSpecification: createTableInput(tableName).StreamSpecification,
        }),
      );
    }
    return "exists";
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  await client.send(new CreateTableCommand(createTableInput(tableName)));
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: tableDefinition.ttl, Enabled: true },
    }),
  );
  return "created";
}
