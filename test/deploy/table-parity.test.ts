import { randomUUID } from "node:crypto";
import {
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  type TableDescription,
} from "@aws-sdk/client-dynamodb";
import { afterAll, describe, expect, it } from "vitest";
import { dynamoEndpoint } from "../support/dynamo-endpoint";
import { ensureTable } from "@invoicing/local/bootstrap";
import { componentsOf, evaluateInfra } from "../../scripts/infra.mjs";

/**
 * Issue 9: the table `npm start` creates (packages/local/src/bootstrap.ts, in DynamoDB Local) is the
 * table infra/storage.ts declares. The declared side is what infra really passes to sst.aws.Dynamo
 * (sst.config.ts evaluated offline), turned into DynamoDB's terms the way SST's Dynamo component
 * does it (.sst/platform/src/components/aws/dynamo.ts: fields → attribute definitions, projection
 * "all" (the default) → ALL, "keys-only" → KEYS_ONLY, a list → INCLUDE, ttl → TTL enabled,
 * on-demand billing). The local side is DynamoDB Local's own DescribeTable of the created table.
 */
interface IndexArgs {
  hashKey: string | string[];
  rangeKey?: string | string[];
  projection?: "all" | "keys-only" | string[];
}
interface DynamoArgs {
  fields: Record<string, "string" | "number" | "binary">;
  primaryIndex: { hashKey: string; rangeKey?: string };
  globalIndexes?: Record<string, IndexArgs>;
  localIndexes?: Record<string, { rangeKey: string; projection?: IndexArgs["projection"] }>;
  stream?: string;
  ttl?: string;
}

/** The comparable shape: keys, attribute types, indexes with projections, TTL, billing, stream. */
interface TableShape {
  attributes: Record<string, string>;
  keys: string[];
  globalIndexes: Record<string, { keys: string[]; projection: { type: string; nonKeyAttributes: string[] } }>;
  localIndexes: Record<string, { keys: string[]; projection: { type: string; nonKeyAttributes: string[] } }>;
  ttl: string | null;
  billing: string;
  stream: boolean;
}

const keys = (hash: string | string[], range?: string | string[]) => [
  ...[hash].flat().map((k) => `HASH ${k}`),
  ...(range === undefined ? [] : [range].flat().map((k) => `RANGE ${k}`)),
];

function projectionOf(projection: IndexArgs["projection"]) {
  if (projection === "keys-only") return { type: "KEYS_ONLY", nonKeyAttributes: [] };
  if (Array.isArray(projection)) return { type: "INCLUDE", nonKeyAttributes: [...projection].sort() };
  return { type: "ALL", nonKeyAttributes: [] };
}

/** What SST creates from the Dynamo component's args. */
function declaredShape(args: DynamoArgs): TableShape {
  const code = { string: "S", number: "N", binary: "B" } as const;
  return {
    attributes: Object.fromEntries(Object.entries(args.fields).map(([name, type]) => [name, code[type]])),
    keys: keys(args.primaryIndex.hashKey, args.primaryIndex.rangeKey),
    globalIndexes: Object.fromEntries(
      Object.entries(args.globalIndexes ?? {}).map(([name, index]) => [
        name,
        { keys: keys(index.hashKey, index.rangeKey), projection: projectionOf(index.projection) },
      ]),
    ),
    localIndexes: Object.fromEntries(
      Object.entries(args.localIndexes ?? {}).map(([name, index]) => [
        name,
        { keys: keys(args.primaryIndex.hashKey, index.rangeKey), projection: projectionOf(index.projection) },
      ]),
    ),
    ttl: args.ttl ?? null,
    billing: "PAY_PER_REQUEST",
    stream: Boolean(args.stream),
  };
}

/** The same shape, read back from DynamoDB. */
function describedShape(table: TableDescription, ttl: string | null): TableShape {
  const keyList = (schema: TableDescription["KeySchema"]) =>
    (schema ?? []).map((k) => `${k.KeyType} ${k.AttributeName}`);
  const index = (i: {
    IndexName?: string;
    KeySchema?: TableDescription["KeySchema"];
    Projection?: { ProjectionType?: string; NonKeyAttributes?: string[] };
  }) => [
    i.IndexName!,
    {
      keys: keyList(i.KeySchema),
      projection: {
        type: i.Projection?.ProjectionType ?? "",
        nonKeyAttributes: [...(i.Projection?.NonKeyAttributes ?? [])].sort(),
      },
    },
  ];
  return {
    attributes: Object.fromEntries((table.AttributeDefinitions ?? []).map((a) => [a.AttributeName!, a.AttributeType!])),
    keys: keyList(table.KeySchema),
    globalIndexes: Object.fromEntries((table.GlobalSecondaryIndexes ?? []).map(index)),
    localIndexes: Object.fromEntries((table.LocalSecondaryIndexes ?? []).map(index)),
    ttl,
    billing: table.BillingModeSummary?.BillingMode ?? "PROVISIONED",
    stream: Boolean(table.StreamSpecification?.StreamEnabled),
  };
}

const client = new DynamoDBClient({
  endpoint: dynamoEndpoint(),
  region: "local",
  credentials: { accessKeyId: "local", secretAccessKey: "local" },
});
afterAll(() => client.destroy());

async function localTable(): Promise<TableShape> {
  const tableName = `test-parity-${randomUUID()}`;
  expect(await ensureTable(client, tableName)).toBe("created");
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  const { TimeToLiveDescription: ttl } = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
  return describedShape(Table!, ttl?.TimeToLiveStatus === "ENABLED" ? (ttl.AttributeName ?? null) : null);
}

describe.each(["dev", "production"])("the %s stage's table", (stage) => {
  it("equals the table npm start creates: keys, attribute types, GSIs, projections, TTL", async () => {
    const infra = await evaluateInfra({ stage, env: { EMAIL_SENDER: "billing@example.com" } });
    const tables = componentsOf(infra, "sst.aws.Dynamo");
    expect(tables.map((t) => t.logicalName)).toEqual(["Table"]);
    const declared = declaredShape(tables[0]!.args as DynamoArgs);

    // Not vacuous: the declaration has the indexes and TTL the jobs and lists depend on.
    expect(Object.keys(declared.globalIndexes).length).toBeGreaterThan(0);
    expect(declared.ttl).not.toBeNull();

    expect(await localTable()).toEqual(declared);
  });
});
