import {
  type AttributeValue,
  BatchGetItemCommand,
  ConditionalCheckFailedException,
  type DynamoDBClient,
  PutItemCommand,
  QueryCommand,
  ResourceNotFoundException,
  ScanCommand,
} from "@aws-sdk/client-dynamodb";
import { tableDefinition } from "@invoicing/core/db/table-definition";
import { backoff } from "@invoicing/core/db/optimistic";

/**
 * A restore's copy-back (`npm run jobs -- restore-copy`; docs/operations.md, "Backups"): copies the
 * items of a table restored from point-in-time recovery into the live table, never over a newer
 * version of an item. A restore always makes a new table and the app keeps its own (SST links its
 * name into every function), so what was lost is brought back by copying, not by switching tables.
 *
 * Each item read from the restored table is written to the live one only if the live table does not
 * have it, or has it at an older `version` (every mutable record carries one, +1 on every write:
 * docs/data-model.md, section 6); an item without a version (a counter, a marker) only if absent. The
 * write is a PutItem conditioned on exactly that, so a user's change that lands between the read and
 * the write wins (`changed`). Running it again copies nothing: every item is then there at its
 * version (`kept`). Items are copied byte for byte (low-level attribute values, no marshalling),
 * their version included, read a page at a time, the live side of a page in one BatchGetItem,
 * written WRITES_AT_ONCE at a time (BatchWriteItem takes no condition).
 *
 * Never copied, because writing them again would redo a side effect or they are derived (NEVER_COPIED);
 * nor an item whose TTL has passed (DynamoDB would delete it again).
 */

type Item = Record<string, AttributeValue>;

/** Sort-key prefixes never copied back, and why. */
export const NEVER_COPIED: readonly { prefix: string; why: string }[] = [
  { prefix: "OUTBOX#", why: "an email: the stream subscriber delivers every inserted one" },
  { prefix: "PEPPOL#", why: "a Peppol delivery: its insert hands the document over again" },
  { prefix: "WEBHOOK_ATTEMPT#", why: "a webhook attempt: a pending one would be delivered again" },
  { prefix: "REPORT#", why: "report aggregates: derived from the records (backfill-reports)" },
  { prefix: "REPORTED#", why: "the report ledger: kept together with the aggregates" },
];

export interface RestoreCopyOptions {
  /** The restored table (`aws dynamodb restore-table-to-point-in-time`'s target). */
  from: string;
  /** The live table. */
  to: string;
  /** Only this user's partition (`pk = USER#<id>`); else the whole restored table (a Scan). */
  userId?: string;
  /** Only items whose sort key starts with this (`INVOICE#`, or one item's whole key). */
  skPrefix?: string;
  /** Read and compare, write nothing: what `copied` counts would be copied. */
  dryRun?: boolean;
  /** The clock for TTLs. */
  now?: Date;
  /** Items read per page (default 100, BatchGetItem's limit). */
  pageSize?: number;
  /** Each item copied (or, dry, to copy), as it is decided. */
  onCopy?: (key: CopiedKey) => void;
  /**
   * Called with each page's items to copy after the live table was read and before they are
   * written: the tests write to the live table there, as a user could at that moment.
   */
  beforeWrite?: (keys: CopiedKey[]) => Promise<void>;
}

export interface CopiedKey {
  pk: string;
  sk: string;
  version: number | null;
}

export interface RestoreCopyResult {
  from: string;
  to: string;
  userId: string | null;
  skPrefix: string | null;
  dryRun: boolean;
  /** Items read from the restored table. */
  read: number;
  /** Written to the live table (dry run: would be). */
  copied: number;
  /** The live table has the item at the same or a newer version (or, without a version, at all). */
  kept: number;
  /** The live item was written between this run's read and its write: left as it is. */
  changed: number;
  /** Of a kind never copied (NEVER_COPIED). */
  excluded: number;
  /** Its TTL had passed. */
  expired: number;
}

/** BatchGetItem's limit, and so a page's size at most. */
const MAX_PAGE = 100;
/** Conditional writes in flight at once: well under any on-demand partition's 1,000 writes a second. */
const WRITES_AT_ONCE = 10;
/** Rounds of BatchGetItem's unprocessed keys before giving up (a throttled table). */
const MAX_BATCH_RETRIES = 7;

export async function copyRestoredItems(
  client: DynamoDBClient,
  options: RestoreCopyOptions,
): Promise<RestoreCopyResult> {
  if (!options.from || !options.to) throw new Error("restore-copy needs both tables: --from and --to");
  if (options.from === options.to) throw new Error("--from and --to name the same table: copy from the restored one");
  const pageSize = Math.min(options.pageSize ?? MAX_PAGE, MAX_PAGE);
  const nowSeconds = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const result: RestoreCopyResult = {
    from: options.from,
    to: options.to,
    userId: options.userId ?? null,
    skPrefix: options.skPrefix ?? null,
    dryRun: options.dryRun === true,
    read: 0,
    copied: 0,
    kept: 0,
    changed: 0,
    excluded: 0,
    expired: 0,
  };

  for await (const page of readRestored(client, options, pageSize)) {
    result.read += page.length;
    const candidates: Item[] = [];
    for (const item of page) {
      const sk = item.sk?.S ?? "";
      if (NEVER_COPIED.some(({ prefix }) => sk.startsWith(prefix))) result.excluded++;
      else if (hasExpired(item, nowSeconds)) result.expired++;
      else candidates.push(item);
    }
    if (candidates.length === 0) continue;
    const live = await readLive(client, options.to, candidates);
    const toCopy = candidates.filter((item) => {
      const copy = isNewer(item, live.get(keyOf(item)));
      if (!copy) result.kept++;
      return copy;
    });
    const keys = toCopy.map(copiedKey);
    if (options.dryRun) {
      for (const key of keys) options.onCopy?.(key);
      result.copied += toCopy.length;
      continue;
    }
    await options.beforeWrite?.(keys);
    await inTurns(toCopy, WRITES_AT_ONCE, async (item, i) => {
      if (await putUnlessNewer(client, options.to, item)) {
        result.copied++;
        options.onCopy?.(keys[i]!);
      } else result.changed++;
    });
  }
  return result;
}

/** The restored table's items, a page at a time: one user's partition by Query, else a Scan. */
async function* readRestored(client: DynamoDBClient, options: RestoreCopyOptions, pageSize: number) {
  const { from, userId, skPrefix } = options;
  const prefix: Item = skPrefix ? { ":prefix": { S: skPrefix } } : {};
  let start: Item | undefined;
  do {
    const out: { Items?: Item[]; LastEvaluatedKey?: Item } = userId
      ? await named(from, () =>
          client.send(
            new QueryCommand({
              TableName: from,
              KeyConditionExpression: `pk = :pk${skPrefix ? " AND begins_with(sk, :prefix)" : ""}`,
              ExpressionAttributeValues: { ":pk": { S: `USER#${userId}` }, ...prefix },
              ConsistentRead: true,
              Limit: pageSize,
              ExclusiveStartKey: start,
            }),
          ),
        )
      : await named(from, () =>
          client.send(
            new ScanCommand({
              TableName: from,
              ...(skPrefix ? { FilterExpression: "begins_with(sk, :prefix)", ExpressionAttributeValues: prefix } : {}),
              ConsistentRead: true,
              Limit: pageSize,
              ExclusiveStartKey: start,
            }),
          ),
        );
    start = out.LastEvaluatedKey;
    if (out.Items && out.Items.length > 0) yield out.Items;
  } while (start);
}

/** The live table's versions of `items`, by key (absent: the live table has no such item). */
async function readLive(client: DynamoDBClient, table: string, items: Item[]): Promise<Map<string, Item>> {
  const found = new Map<string, Item>();
  let pending = items.map((item) => ({ pk: item.pk!, sk: item.sk! }));
  for (let retries = 0; pending.length > 0; ) {
    const out = await named(table, () =>
      client.send(
        new BatchGetItemCommand({
          RequestItems: {
            [table]: {
              Keys: pending,
              ConsistentRead: true,
              ProjectionExpression: "pk, sk, #version",
              ExpressionAttributeNames: { "#version": "version" },
            },
          },
        }),
      ),
    );
    for (const item of out.Responses?.[table] ?? []) found.set(keyOf(item), item);
    pending = (out.UnprocessedKeys?.[table]?.Keys ?? []) as typeof pending;
    if (pending.length > 0) {
      if (++retries > MAX_BATCH_RETRIES) throw new Error(`${table} kept refusing reads (throttled): run again later`);
      await backoff(retries);
    }
  }
  return found;
}

/** Whether the restored item may replace what the live table has: nothing there, or an older version. */
function isNewer(restored: Item, live: Item | undefined): boolean {
  if (!live) return true;
  const restoredVersion = versionOf(restored);
  const liveVersion = versionOf(live);
  return restoredVersion !== null && liveVersion !== null && liveVersion < restoredVersion;
}

/** The same decision, made by DynamoDB at the write: a change made since the live read wins. */
async function putUnlessNewer(client: DynamoDBClient, table: string, item: Item): Promise<boolean> {
  const versioned = versionOf(item) !== null;
  try {
    await client.send(
      new PutItemCommand({
        TableName: table,
        Item: item,
        ConditionExpression: versioned ? "attribute_not_exists(pk) OR #version < :version" : "attribute_not_exists(pk)",
        ...(versioned
          ? {
              ExpressionAttributeNames: { "#version": "version" },
              ExpressionAttributeValues: { ":version": item.version! },
            }
          : {}),
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

const keyOf = (item: Item): string => `${item.pk?.S}|${item.sk?.S}`;
const versionOf = (item: Item): number | null => (item.version?.N === undefined ? null : Number(item.version.N));
const copiedKey = (item: Item): CopiedKey => ({ pk: item.pk!.S!, sk: item.sk!.S!, version: versionOf(item) });

function hasExpired(item: Item, nowSeconds: number): boolean {
  const ttl = item[tableDefinition.ttl]?.N;
  return ttl !== undefined && Number(ttl) < nowSeconds;
}

/**
 * `work` on each item, at most `limit` at once. Not core's withConcurrency: that one logs a failed
 * item and goes on, and here a write that fails (not a lost condition) must stop the copy loudly.
 */
async function inTurns<T>(items: T[], limit: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      await work(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** A missing table named in the error, rather than the SDK's "Requested resource not found". */
async function named<T>(table: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof ResourceNotFoundException)
      throw new Error(`table ${table} not found (in this account and region)`);
    throw error;
  }
}
