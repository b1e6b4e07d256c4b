import { type FaultProxy, startFaultProxy } from "../../test/support/fault-proxy";

/**
 * DynamoDB Local made to behave like DynamoDB under load, for the scale simulation: the fault
 * proxy (test/support/fault-proxy.ts) in front of it, with
 * - a token bucket per partition key value (per table and index) for reads and for writes, refilled
 *   at `readUnitsPerSecond` / `writeUnitsPerSecond` and holding `burstSeconds` of it: a request that
 *   finds a bucket it needs empty is answered 400 ProvisionedThroughputExceededException before it
 *   reaches the table, so the SDK backs off and retries exactly as it does on AWS;
 * - a latency per request like DynamoDB's from inside its region: a few milliseconds with a tail,
 *   DynamoDB Local's own time counted in it (the answer is held for what is left of it), so the
 *   emulator adds to a request's time only once it is busier than DynamoDB would be.
 *
 * Units are counted as DynamoDB counts them, approximately (the wire JSON stands in for the item's
 * size): a write is one unit per KB of what it writes, doubled in a transaction, charged to the
 * item's partition and to every index partition the write names (duePk, gsi1pk, … and the `DUE#…`
 * values an update sets); a read is one unit per 4 KB it returned (half when eventually consistent),
 * charged after the answer, so a large read can leave its bucket below zero for a while, as DynamoDB's
 * own accounting does.
 *
 * It also counts the items each read returned per user (the `USER#<id>` of each item), and apart
 * the items a query of the due lists returned: the simulation's "items read per due item".
 */
export interface PartitionLimits {
  readUnitsPerSecond: number;
  writeUnitsPerSecond: number;
  burstSeconds: number;
}

export interface Latency {
  /** Every request waits at least this. */
  baseMs: number;
  /** Plus an exponentially distributed part with this mean. */
  meanExtraMs: number;
  /** This share of requests waits `tailMs` more (DynamoDB's occasional slow answer). */
  tailShare: number;
  tailMs: number;
}

export interface ReadCounts {
  /** Items returned, per user. */
  items: Map<string, number>;
  /** Of those, items returned by a query of the byDue index. */
  dueItems: Map<string, number>;
}

export interface AwsLikeDynamo {
  url: string;
  /**
   * The DynamoDB Locals behind it (at least one). A table lives on one of them, the first unless
   * `place` put it elsewhere: users whose tables are on different instances do not wait for each
   * other's requests in one emulator, as different partition keys on AWS are served by different
   * storage nodes (docs/scale.md, "Emulator instances").
   */
  instances: readonly string[];
  /** Routes the requests for `tableName` to `instance` (one of `instances`). */
  place(tableName: string, instance: string): void;
  proxy: FaultProxy;
  /** Requests answered with a throughput exception so far, reads and writes. */
  throttled: { reads: number; writes: number };
  /** Capacity units consumed so far (base table and indexes), as charged to the buckets. */
  units: { read: number; write: number };
  reads: ReadCounts;
  /** Requests seen since the counts were reset. */
  requests(): number;
  /**
   * Runs the simulation `factor` times slower than AWS from now on: every latency `factor` times
   * longer, the limits of partitions met from now on `factor` times lower (docs/scale.md, "slowdown").
   */
  setSlowdown(factor: number): void;
  resetCounts(): void;
  close(): Promise<void>;
}

// biome-ignore lint/suspicious/noExplicitAny: DynamoDB wire JSON of every shape
type Wire = any;

const WRITE_OPERATIONS = new Set(["PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"]);
const READ_OPERATIONS = new Set(["GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"]);

class Bucket {
  private tokens: number;
  private at = performance.now();
  constructor(
    private readonly rate: number,
    private readonly capacity: number,
  ) {
    this.tokens = capacity;
  }
  private refill(): void {
    const now = performance.now();
    this.tokens = Math.min(this.capacity, this.tokens + ((now - this.at) / 1000) * this.rate);
    this.at = now;
  }
  /** Whether `units` can be taken now (for a read: whether anything is left). */
  has(units: number): boolean {
    this.refill();
    return this.tokens >= units;
  }
  take(units: number): void {
    this.refill();
    this.tokens -= units;
  }
}

export async function startAwsLikeDynamo(
  instances: readonly string[],
  limits: PartitionLimits,
  latency: Latency,
): Promise<AwsLikeDynamo> {
  let slowdown = 1;
  const placed = new Map<string, string>();
  const buckets = new Map<string, Bucket>();
  const bucket = (kind: "read" | "write", partition: string) => {
    const name = `${kind} ${partition}`;
    let found = buckets.get(name);
    if (!found) {
      const rate = (kind === "read" ? limits.readUnitsPerSecond : limits.writeUnitsPerSecond) / slowdown;
      buckets.set(name, (found = new Bucket(rate, rate * limits.burstSeconds)));
    }
    return found;
  };
  const throttled = { reads: 0, writes: 0 };
  const units = { read: 0, write: 0 };
  const reads: ReadCounts = { items: new Map(), dueItems: new Map() };

  const proxy = await startFaultProxy(instances[0]!, {
    upstreamFor: (body) => placed.get(tableOf(body as Wire) ?? ""),
    latencyMs: (operation) => {
      let ms = latency.baseMs - latency.meanExtraMs * Math.log(1 - Math.random());
      if (Math.random() < latency.tailShare) ms += latency.tailMs;
      return (operation.startsWith("Transact") ? 2 * ms : ms) * slowdown;
    },
    observe: (operation, body, status, response) => {
      if (status !== 200 || !READ_OPERATIONS.has(operation)) return;
      const answer = JSON.parse(response.toString("utf8")) as Wire;
      const readUnits = Math.max(1, Math.ceil(response.length / 4096)) * (consistent(operation, body) ? 1 : 0.5);
      const partitions = readPartitions(operation, body);
      for (const partition of partitions) bucket("read", partition).take(readUnits / partitions.length);
      units.read += readUnits;
      const items = returnedItems(operation, answer);
      const dueQuery = operation === "Query" && (body as Wire)?.IndexName === "byDue";
      for (const item of items) {
        const user = userOf(item);
        if (!user) continue;
        reads.items.set(user, (reads.items.get(user) ?? 0) + 1);
        if (dueQuery) reads.dueItems.set(user, (reads.dueItems.get(user) ?? 0) + 1);
      }
    },
  });
  // Decided when the request arrives, as DynamoDB's request router does.
  proxy.inject({
    times: Number.POSITIVE_INFINITY,
    match: () => true,
    fault: (operation, body) => {
      if (WRITE_OPERATIONS.has(operation)) {
        const charges = writeCharges(operation, body as Wire);
        if (charges.some(([partition, units]) => !bucket("write", partition).has(units))) {
          throttled.writes++;
          return "provisioned";
        }
        for (const [partition, charged] of charges) {
          bucket("write", partition).take(charged);
          units.write += charged;
        }
        return undefined;
      }
      if (READ_OPERATIONS.has(operation)) {
        if (readPartitions(operation, body as Wire).some((partition) => !bucket("read", partition).has(0))) {
          throttled.reads++;
          return "provisioned";
        }
      }
      return undefined;
    },
  });

  return {
    url: proxy.url,
    instances,
    place: (tableName, instance) => placed.set(tableName, instance),
    proxy,
    throttled,
    units,
    reads,
    requests: () => proxy.log.length,
    setSlowdown(factor) {
      slowdown = factor;
    },
    resetCounts() {
      units.read = 0;
      units.write = 0;
      reads.items.clear();
      reads.dueItems.clear();
      throttled.reads = 0;
      throttled.writes = 0;
      proxy.log.length = 0;
    },
    close: () => proxy.close(),
  };
}

/** The table a request names (every request of one goes to one table here). */
function tableOf(body: Wire): string | undefined {
  if (typeof body?.TableName === "string") return body.TableName;
  const item = body?.TransactItems?.[0];
  if (item) return (Object.values(item)[0] as Wire)?.TableName;
  const batch = body?.RequestItems;
  return batch ? Object.keys(batch)[0] : undefined;
}

const consistent = (operation: string, body: Wire): boolean =>
  operation === "TransactGetItems" || body?.ConsistentRead === true;

/** The user a returned item belongs to (its `pk` is `USER#<id>`), if any. */
function userOf(item: Wire): string | undefined {
  const pk = item?.pk?.S;
  return typeof pk === "string" && pk.startsWith("USER#") ? pk.slice("USER#".length) : undefined;
}

function returnedItems(operation: string, answer: Wire): Wire[] {
  switch (operation) {
    case "GetItem":
      return answer.Item ? [answer.Item] : [];
    case "Query":
    case "Scan":
      return answer.Items ?? [];
    case "BatchGetItem":
      return Object.values(answer.Responses ?? {}).flat() as Wire[];
    case "TransactGetItems":
      return (answer.Responses ?? []).map((r: Wire) => r.Item).filter(Boolean);
    default:
      return [];
  }
}

/** The partitions a read reads: `<table> <index or base> <partition key value>`. */
function readPartitions(operation: string, body: Wire): string[] {
  switch (operation) {
    case "GetItem":
      return [partitionName(body.TableName, undefined, body.Key?.pk?.S)];
    case "Query": {
      // The first equality of the key condition names the partition key's value.
      const match = /([#\w]+)\s*=\s*(:\w+)/.exec(String(body.KeyConditionExpression ?? ""));
      const value = match ? body.ExpressionAttributeValues?.[match[2]!]?.S : undefined;
      return [partitionName(body.TableName, body.IndexName, value)];
    }
    case "BatchGetItem":
      return Object.entries(body.RequestItems ?? {}).flatMap(([table, request]) =>
        ((request as Wire).Keys ?? []).map((key: Wire) => partitionName(table, undefined, key.pk?.S)),
      );
    case "TransactGetItems":
      return (body.TransactItems ?? []).map((t: Wire) => partitionName(t.Get?.TableName, undefined, t.Get?.Key?.pk?.S));
    default:
      return [partitionName(body.TableName, "scan", "")];
  }
}

/** Units per partition a write takes: its item's partition and the index partitions it names. */
function writeCharges(operation: string, body: Wire): [string, number][] {
  const charges: [string, number][] = [];
  const charge = (table: string, element: Wire, key: Wire, factor: number) => {
    const units = Math.max(1, Math.ceil(JSON.stringify(element).length / 1024)) * factor;
    charges.push([partitionName(table, undefined, key?.pk?.S), units]);
    for (const index of indexPartitions(element)) charges.push([`${table} ${index}`, units]);
  };
  switch (operation) {
    case "PutItem":
      charge(body.TableName, body.Item, body.Item, 1);
      break;
    case "UpdateItem":
    case "DeleteItem":
      charge(body.TableName, body, body.Key, 1);
      break;
    case "TransactWriteItems":
      for (const t of body.TransactItems ?? []) {
        const [kind, op] = Object.entries(t)[0] as [string, Wire];
        charge(op.TableName, kind === "Put" ? op.Item : op, kind === "Put" ? op.Item : op.Key, 2);
      }
      break;
    case "BatchWriteItem":
      for (const [table, requests] of Object.entries(body.RequestItems ?? {}))
        for (const r of requests as Wire[]) {
          const item = r.PutRequest?.Item ?? r.DeleteRequest?.Key;
          charge(table, item, item, 1);
        }
      break;
  }
  return charges;
}

/**
 * Index partitions a write touches, as far as the request says: the `…pk` attributes of an item it
 * puts, and any `DUE#…` value it sets (the due lists are where the simulation's load meets an index).
 */
function indexPartitions(element: Wire): string[] {
  const found = new Set<string>();
  for (const [name, value] of Object.entries(element ?? {})) {
    if (name !== "pk" && /pk$/i.test(name) && typeof (value as Wire)?.S === "string")
      found.add(`${name} ${(value as Wire).S}`);
  }
  for (const value of Object.values(element?.ExpressionAttributeValues ?? {})) {
    const s = (value as Wire)?.S;
    if (typeof s === "string" && s.startsWith("DUE#")) found.add(`duePk ${s}`);
  }
  return [...found];
}

function partitionName(table: string, index: string | undefined, value: string | undefined): string {
  return `${table} ${index ?? "base"} ${value ?? "?"}`;
}
