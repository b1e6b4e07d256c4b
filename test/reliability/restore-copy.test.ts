import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import {
  type AttributeValue,
  DynamoDBClient,
  PutItemCommand,
  ScanCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import { afterAll, describe, expect, it } from "vitest";
import { copyRestoredItems, type RestoreCopyOptions } from "@invoicing/local/restore-copy";
import { dynamoEndpoint } from "../support/dynamo-endpoint";
import { createFreshTable } from "../support/table";

/**
 * A restore's copy-back (docs/operations.md, "Backups"): `npm run jobs -- restore-copy` copies items
 * from a point-in-time-restored table into the live one, never over a newer version, idempotent when
 * run again. Two tables in DynamoDB Local stand for the restored and the live table; the items are
 * written with the low-level client, so every rule has its own item.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const endpoint = dynamoEndpoint();
const client = new DynamoDBClient({
  endpoint,
  region: "local",
  credentials: { accessKeyId: "local", secretAccessKey: "local" },
});
afterAll(() => client.destroy());

type Item = Record<string, AttributeValue>;
const NOW = new Date("2026-11-27T12:00:00Z");
const nowSeconds = NOW.getTime() / 1000;

const item = (user: string, sk: string, version: number | null, extra: Item = {}): Item => ({
  pk: { S: `USER#${user}` },
  sk: { S: sk },
  ...(version === null ? {} : { version: { N: String(version) } }),
  ...extra,
});

/** What the restored table holds (the state at the restore's time). */
const RESTORED: Item[] = [
  item("alice", "CLIENT#0000000001", 3, { name: { S: "Stark" } }), // lost from live: copied
  item("alice", "INVOICE#0000000001", 5, { total: { S: "100.00" } }), // live has v4: copied
  item("alice", "INVOICE#0000000002", 5, { total: { S: "200.00" } }), // live has v6: kept
  item("alice", "INVOICE#0000000003", 2, { total: { S: "300.00" } }), // live has v2: kept
  item("alice", "COUNTER#invoice", null, { value: { N: "7" } }), // lost, no version: copied
  item("alice", "COUNTER#invoiceNumber", null, { value: { N: "3" } }), // live has 9: kept
  item("alice", "OUTBOX#01JD000000", 1, { status: { S: "pending" } }), // never copied
  item("alice", "REPORT#2026-11#EUR", null, { invoiced: { N: "10000" } }), // never copied
  item("alice", "IDEMPOTENCY#abc", 1, { expiresAt: { N: String(nowSeconds - 60) } }), // TTL passed
  item("alice", "EVENT#2026-11-27T11:00:00.000Z#1#0", null, { expiresAt: { N: String(nowSeconds + 3600) } }),
  item("alice", "BUSINESS_PROFILE#LOGO", 1, {
    bytes: { B: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 255]) },
    // A number past 2^53 survives: the copy writes attribute values as read, no marshalling.
    big: { N: "12345678901234567890" },
    tags: { SS: ["a", "b"] },
    none: { NULL: true },
  }),
  item("bob", "CLIENT#0000000001", 1, { name: { S: "Wayne" } }),
];

/** What the live table holds now. */
const LIVE: Item[] = [
  item("alice", "INVOICE#0000000001", 4, { total: { S: "90.00" } }),
  item("alice", "INVOICE#0000000002", 6, { total: { S: "250.00" } }),
  item("alice", "INVOICE#0000000003", 2, { total: { S: "300.00" } }),
  item("alice", "COUNTER#invoiceNumber", null, { value: { N: "9" } }),
];

async function put(table: string, items: Item[]): Promise<void> {
  for (const Item of items) await client.send(new PutItemCommand({ TableName: table, Item }));
}

async function scan(table: string): Promise<Map<string, Item>> {
  const items = new Map<string, Item>();
  let start: Item | undefined;
  do {
    const out = await client.send(
      new ScanCommand({ TableName: table, ConsistentRead: true, ExclusiveStartKey: start }),
    );
    for (const found of out.Items ?? []) items.set(`${found.pk!.S}|${found.sk!.S}`, found);
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

/** A restored and a live table, filled as above. */
async function world(): Promise<{ from: string; to: string }> {
  const [restored, live] = await Promise.all([
    createFreshTable(endpoint, "restored"),
    createFreshTable(endpoint, "live"),
  ]);
  await Promise.all([put(restored.tableName, RESTORED), put(live.tableName, LIVE)]);
  return { from: restored.tableName, to: live.tableName };
}

const copy = (tables: { from: string; to: string }, options: Partial<RestoreCopyOptions> = {}) =>
  copyRestoredItems(client, { ...tables, now: NOW, pageSize: 3, ...options });

const key = (user: string, sk: string) => `USER#${user}|${sk}`;

describe("restore-copy", () => {
  it("copies what the live table lacks or has older, keeps what it has at the same or a newer version", async () => {
    const tables = await world();
    const restored = await scan(tables.from);
    const copied: string[] = [];
    const result = await copy(tables, { userId: "alice", onCopy: (k) => copied.push(`${k.pk}|${k.sk}`) });
    expect(result).toEqual({
      from: tables.from,
      to: tables.to,
      userId: "alice",
      skPrefix: null,
      dryRun: false,
      read: 11,
      copied: 5,
      kept: 3,
      changed: 0,
      excluded: 2,
      expired: 1,
    });
    expect(copied.sort()).toEqual(
      [
        key("alice", "BUSINESS_PROFILE#LOGO"),
        key("alice", "CLIENT#0000000001"),
        key("alice", "COUNTER#invoice"),
        key("alice", "EVENT#2026-11-27T11:00:00.000Z#1#0"),
        key("alice", "INVOICE#0000000001"),
      ].sort(),
    );
    const live = await scan(tables.to);
    // Copied byte for byte, version included.
    for (const k of copied) expect(live.get(k), k).toEqual(restored.get(k));
    expect(live.get(key("alice", "BUSINESS_PROFILE#LOGO"))!.big).toEqual({ N: "12345678901234567890" });
    // Newer and equal versions, and a present counter, are left as the live table has them.
    expect(live.get(key("alice", "INVOICE#0000000002"))).toMatchObject({ version: { N: "6" }, total: { S: "250.00" } });
    expect(live.get(key("alice", "COUNTER#invoiceNumber"))).toMatchObject({ value: { N: "9" } });
    // Never: the outbox (it would be emailed again), the report aggregates (derived), an expired item,
    // another user's partition.
    for (const sk of ["OUTBOX#01JD000000", "REPORT#2026-11#EUR", "IDEMPOTENCY#abc"])
      expect(live.has(key("alice", sk)), sk).toBe(false);
    expect(live.has(key("bob", "CLIENT#0000000001"))).toBe(false);
    // Four new items beside the four the live table had (invoice 1 replaced in place).
    expect(live.size).toBe(LIVE.length + 4);
  });

  it("run again, it copies nothing (idempotent)", async () => {
    const tables = await world();
    await copy(tables, { userId: "alice" });
    const before = await scan(tables.to);
    expect(await copy(tables, { userId: "alice" })).toMatchObject({ read: 11, copied: 0, kept: 8, changed: 0 });
    expect(await scan(tables.to)).toEqual(before);
  });

  it("a dry run reports what it would copy and writes nothing", async () => {
    const tables = await world();
    const before = await scan(tables.to);
    const planned: string[] = [];
    const result = await copy(tables, { userId: "alice", dryRun: true, onCopy: (k) => planned.push(k.sk) });
    expect(result).toMatchObject({ dryRun: true, read: 11, copied: 5, kept: 3, excluded: 2, expired: 1 });
    expect(planned).toHaveLength(5);
    expect(await scan(tables.to)).toEqual(before);
  });

  it("a user's write between the read and the copy wins: the conditional write refuses to go over it", async () => {
    const tables = await world();
    const result = await copy(tables, {
      userId: "alice",
      skPrefix: "INVOICE#",
      // The user edits invoice 1 (live v4 → v5, the restored version) and recreates client 1 meanwhile.
      beforeWrite: async (keys) => {
        expect(keys.map((k) => k.sk)).toEqual(["INVOICE#0000000001"]);
        await client.send(
          new UpdateItemCommand({
            TableName: tables.to,
            Key: { pk: { S: "USER#alice" }, sk: { S: "INVOICE#0000000001" } },
            UpdateExpression: "SET version = :v, #total = :t",
            ExpressionAttributeNames: { "#total": "total" },
            ExpressionAttributeValues: { ":v": { N: "5" }, ":t": { S: "95.00" } },
          }),
        );
      },
    });
    expect(result).toMatchObject({ read: 3, copied: 0, kept: 2, changed: 1 });
    expect((await scan(tables.to)).get(key("alice", "INVOICE#0000000001"))).toMatchObject({
      version: { N: "5" },
      total: { S: "95.00" },
    });
  });

  it("a versionless item created meanwhile is not overwritten either", async () => {
    const tables = await world();
    const result = await copy(tables, {
      userId: "alice",
      skPrefix: "COUNTER#",
      beforeWrite: async () => put(tables.to, [item("alice", "COUNTER#invoice", null, { value: { N: "8" } })]),
    });
    expect(result).toMatchObject({ read: 2, copied: 0, kept: 1, changed: 1 });
    expect((await scan(tables.to)).get(key("alice", "COUNTER#invoice"))).toMatchObject({ value: { N: "8" } });
  });

  it("without --user it copies every partition; the same table twice is refused", async () => {
    const tables = await world();
    expect(await copy(tables)).toMatchObject({ read: RESTORED.length, copied: 6, kept: 3 });
    expect((await scan(tables.to)).has(key("bob", "CLIENT#0000000001"))).toBe(true);
    await expect(copy({ from: tables.to, to: tables.to })).rejects.toThrow(/same table/);
    await expect(copy({ from: `${tables.from}-missing`, to: tables.to })).rejects.toThrow(/not found/);
  });

  it("npm run jobs -- restore-copy: one line per item copied, then the counts", async () => {
    const tables = await world();
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "packages/local/src/jobs-cli.ts", "restore-copy", "--from", tables.from, "--user", "bob"],
      {
        cwd: ROOT,
        // --to defaults to the stage's table (TABLE_NAME here; the linked Table under sst shell).
        env: {
          ...process.env,
          DYNAMODB_ENDPOINT: endpoint,
          TABLE_NAME: tables.to,
          AWS_REGION: "local",
          DATA_DIR: mkdtempSync(join(tmpdir(), "invoicing-restore-")),
        },
        timeout: 120_000,
      },
    );
    const lines = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toEqual([
      { pk: "USER#bob", sk: "CLIENT#0000000001", version: 1, action: "copied" },
      expect.objectContaining({ from: tables.from, to: tables.to, userId: "bob", read: 1, copied: 1 }),
    ]);
    expect((await scan(tables.to)).get(key("bob", "CLIENT#0000000001"))).toEqual(
      (await scan(tables.from)).get(key("bob", "CLIENT#0000000001")),
    );
  });
});
