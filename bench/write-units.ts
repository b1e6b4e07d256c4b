import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DynamoDBClient, GetItemCommand, type AttributeValue } from "@aws-sdk/client-dynamodb";
import { marshall } from "@aws-sdk/util-dynamodb";
import type { Deps } from "@invoicing/core/deps";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { attachMeter } from "../test/support/metering";
import { tableDefinition } from "@invoicing/core/db/table-definition";
import { FileTransport } from "@invoicing/core/email/file-transport";
import { LOCAL_FROM } from "@invoicing/core/email/sender";
import { jobs } from "@invoicing/core/jobs/all";
import { createApiKey } from "@invoicing/core/keys/api-keys";
import { attachmentsFor } from "@invoicing/core/public/attachments";
import { createApp } from "@invoicing/functions/app/create-app";
import { renderDocumentPdf } from "@invoicing/functions/pdf/document-pdf";
import { createStreamReader } from "@invoicing/local/stream-reader";
import { request } from "../test/support/env";
import { createFreshTable } from "../test/support/table";

/**
 * Write units per invoice lifecycle and per email, by table and index, under each index projection
 * (issue 37 item 3; `npm run bench -- units`). DynamoDB Local reports one total per call for the
 * table as it is, which neither splits by index nor prices another projection, so the units are
 * computed from the items themselves: every successful write the service makes through
 * its client is recorded with the item's image before and after (read back consistently around the
 * write), and priced by DynamoDB's rules —
 * - the table: ceil(the larger image's size / 1 KB), twice inside a transaction;
 * - each index: an item entering it is a put, leaving it a delete, changing its index key a delete
 *   and a put, and changing only attributes the index projects one update; each ceil(entry size /
 *   1 KB), the entry being the table's key, the index's key, the projected attributes and 100
 *   bytes. Index writes are counted once, transaction or not (an assumption: AWS's pricing page
 *   doubles only the table's transactional writes).
 * Item sizes follow DynamoDB's item-size rules (names + values; a number ~1 byte per 2 digits + 1;
 * lists and maps 3 bytes + 1 per element). Failed conditional writes are not counted.
 *
 * The same images are priced under each projection set below, so before and after differ only by
 * the projection, never by the run.
 */

type Image = Record<string, AttributeValue> | undefined;
type Projection = "all" | "keys-only";
type IndexName = keyof typeof tableDefinition.globalIndexes;
type Projections = Record<IndexName, Projection>;

interface WriteRecord {
  kind: string;
  transactional: boolean;
  before: Image;
  after: Image;
}

const CURRENT: Projections = Object.fromEntries(
  Object.entries(tableDefinition.globalIndexes).map(([name, index]) => [name, index.projection]),
) as Projections;

/** The projection sets priced: the before, the current table, and one option weighed. */
export const PROJECTION_SETS: { name: string; projections: Projections }[] = [
  { name: "before: every index ALL", projections: { byStatus: "all", byClient: "all", byDue: "all", byToken: "all" } },
  { name: "after: byDue KEYS_ONLY (the table now)", projections: CURRENT },
  { name: "option: byToken KEYS_ONLY too (not taken)", projections: { ...CURRENT, byToken: "keys-only" } },
];

// ---- sizes (DynamoDB's item-size rules) ----

function valueSize(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S, "utf8");
  if (value.N !== undefined) return Math.ceil(value.N.replace(/^-|\.|^0+/g, "").length / 2) + 1;
  if (value.B !== undefined) return value.B.byteLength;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS) return value.SS.reduce((n, s) => n + Buffer.byteLength(s, "utf8"), 0);
  if (value.NS) return value.NS.reduce((n, s) => n + valueSize({ N: s }), 0);
  if (value.BS) return value.BS.reduce((n, b) => n + b.byteLength, 0);
  if (value.L) return 3 + value.L.reduce((n, v) => n + 1 + valueSize(v), 0);
  if (value.M) return 3 + Object.entries(value.M).reduce((n, [k, v]) => n + 1 + Buffer.byteLength(k) + valueSize(v), 0);
  return 0;
}

const attributesSize = (image: Record<string, AttributeValue>, names?: readonly string[]): number =>
  Object.entries(image)
    .filter(([name]) => !names || names.includes(name))
    .reduce((n, [name, value]) => n + Buffer.byteLength(name, "utf8") + valueSize(value), 0);

const units = (bytes: number): number => Math.max(1, Math.ceil(bytes / 1024));

// ---- pricing one write ----

const indexKeyNames = (name: IndexName): string[] => {
  const index = tableDefinition.globalIndexes[name] as { hashKey: string; rangeKey?: string };
  return index.rangeKey ? [index.hashKey, index.rangeKey] : [index.hashKey];
};
const inIndex = (image: Image, keys: string[]): image is Record<string, AttributeValue> =>
  !!image && keys.every((k) => image[k]?.S !== undefined);
const same = (a: AttributeValue | undefined, b: AttributeValue | undefined) => JSON.stringify(a) === JSON.stringify(b);

function entry(image: Record<string, AttributeValue>, keys: string[], projection: Projection) {
  const names = projection === "all" ? undefined : ["pk", "sk", ...keys];
  const projected = Object.fromEntries(Object.entries(image).filter(([name]) => !names || names.includes(name)));
  return { projected, size: attributesSize(projected) + 100 };
}

function indexUnits(write: WriteRecord, name: IndexName, projection: Projection): number {
  const keys = indexKeyNames(name);
  const was = inIndex(write.before, keys) ? entry(write.before!, keys, projection) : undefined;
  const is = inIndex(write.after, keys) ? entry(write.after!, keys, projection) : undefined;
  if (!was && !is) return 0;
  if (!was) return units(is!.size);
  if (!is) return units(was.size);
  if (keys.some((k) => !same(write.before![k], write.after![k]))) return units(was.size) + units(is.size);
  return JSON.stringify(was.projected) === JSON.stringify(is.projected) ? 0 : units(Math.max(was.size, is.size));
}

function tableUnits(write: WriteRecord): number {
  const size = Math.max(write.before ? attributesSize(write.before) : 0, write.after ? attributesSize(write.after) : 0);
  return units(size) * (write.transactional ? 2 : 1);
}

export interface UnitRow {
  projections: string;
  scenario: string;
  table: number;
  byStatus: number;
  byClient: number;
  byDue: number;
  byToken: number;
  total: number;
}

function price(writes: WriteRecord[], scenario: string, set: (typeof PROJECTION_SETS)[number]): UnitRow {
  const row: UnitRow = {
    projections: set.name,
    scenario,
    table: 0,
    byStatus: 0,
    byClient: 0,
    byDue: 0,
    byToken: 0,
    total: 0,
  };
  for (const write of writes) {
    row.table += tableUnits(write);
    for (const name of Object.keys(set.projections) as IndexName[])
      row[name] += indexUnits(write, name, set.projections[name]);
  }
  row.total = row.table + row.byStatus + row.byClient + row.byDue + row.byToken;
  return row;
}

// ---- recording the service's writes ----

type Key = Record<string, string>;
/** The client's command names (a document client's command runs as its client's). */
const WRITE_COMMANDS = new Set([
  "PutItemCommand",
  "UpdateItemCommand",
  "DeleteItemCommand",
  "TransactWriteItemsCommand",
]);

/** A key attribute as the input holds it: plain, or already marshalled ({ S: … }). */
const plain = (value: unknown): string =>
  typeof value === "object" && value !== null && "S" in value ? String((value as { S: string }).S) : String(value);

/** One write of a transaction, or a single write's input: its item or its key. */
interface WriteOp {
  Item?: Record<string, unknown>;
  Key?: Record<string, unknown>;
}

/** The keys a write names. */
function keysOf(command: string, input: WriteOp & { TransactItems?: Record<string, WriteOp | undefined>[] }): Key[] {
  const keyOf = (op: WriteOp): Key => {
    const source = op.Item ?? op.Key ?? {};
    return { pk: plain(source.pk), sk: plain(source.sk) };
  };
  if (command === "TransactWriteItemsCommand") {
    return (input.TransactItems ?? [])
      .map((t) => t.Put ?? t.Update ?? t.Delete)
      .filter((op): op is WriteOp => op !== undefined)
      .map(keyOf);
  }
  return [keyOf(input)];
}

function recordWrites(doc: DynamoDBDocumentClient, raw: DynamoDBClient, table: string) {
  const writes: WriteRecord[] = [];
  const read = async (key: Key): Promise<Image> =>
    (await raw.send(new GetItemCommand({ TableName: table, Key: marshall(key), ConsistentRead: true }))).Item;
  doc.middlewareStack.add(
    (next, context) => async (args) => {
      const command = context.commandName ?? "";
      if (!WRITE_COMMANDS.has(command)) return next(args);
      const keys = keysOf(command, args.input as Parameters<typeof keysOf>[1]);
      const before = await Promise.all(keys.map(read));
      const result = await next(args); // a failed write throws: nothing recorded
      const after = await Promise.all(keys.map(read));
      keys.forEach((key, i) => {
        writes.push({
          kind: String(key.sk ?? key.pk).split("#")[0]!,
          transactional: command === "TransactWriteItemsCommand",
          before: before[i],
          after: after[i],
        });
      });
      return result;
    },
    { step: "initialize", name: "write-units", override: true },
  );
  return writes;
}

// ---- the scenarios ----

export interface WriteUnitFigures {
  rows: UnitRow[];
  /** What DynamoDB Local itself reported for the lifecycle (ConsumedCapacity), as a cross-check. */
  localReported: { writeUnits: number; readUnits: number };
  /** Writes per kind of item in the lifecycle (the table's own writes). */
  writesByKind: Record<string, number>;
}

const line = { description: "Consulting", quantity: "3", unitPrice: "19.99", taxRate: "0.0825" };

export async function measureWriteUnits(endpoint: string): Promise<WriteUnitFigures> {
  const { db, tableName } = await createFreshTable(endpoint, "bench-units");
  const clock = { now: new Date("2026-11-22T09:30:00.000Z") };
  const deps: Deps = {
    db,
    clock: () => clock.now,
    publicBaseUrl: "http://localhost:3000",
    outbox: new FileTransport(mkdtempSync(join(tmpdir(), "bench-units-")), { from: LOCAL_FROM }),
    renderPdf: (view, now) => renderDocumentPdf(view, { now }),
    emailAttachments: attachmentsFor,
  };
  const app = createApp(deps);
  const stream = createStreamReader(deps, { endpoint, tableName });
  const raw = new DynamoDBClient({
    endpoint,
    region: "local",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
  const { key } = await createApiKey(db, "units", "bench", clock.now);
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await request(app, method, path, body, { Authorization: `Bearer ${key}` });
    if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${res.text.slice(0, 200)}`);
    return res.body;
  };
  const client = await call("POST", "/clients", { name: "Units client", email: "units@example.com" });
  // The key's lastUsedAt and the first events of the client: before the measured part.
  await call("GET", `/clients/${client.id}`);
  await stream.drain();

  const writes = recordWrites(db.doc, raw, tableName);
  const meter = attachMeter(db.doc);
  try {
    // An invoice's life as the cost bench has it (create, finalize, send, two looks, paid), with
    // what follows from it: its email delivered, its events and report figures kept by the stream
    // subscriber, and its reminders (cancelled by the payment) taken off their list by the job.
    const invoice = await call("POST", "/invoices", { clientId: client.id, dueDate: "2026-12-22", lineItems: [line] });
    await call("POST", `/invoices/${invoice.id}/finalize`);
    await call("POST", `/invoices/${invoice.id}/send`);
    await stream.drain();
    await call("GET", `/invoices/${invoice.id}`);
    await call("GET", `/invoices/${invoice.id}`);
    await call("POST", `/invoices/${invoice.id}/mark-paid`, { paymentMethod: "bank_transfer" });
    await stream.drain();
    clock.now = new Date("2027-01-31T09:30:00.000Z"); // past every reminder (dueDate + 30 days)
    await jobs.reminders!(deps, clock.now);
    await stream.drain();
  } finally {
    meter.detach();
    raw.destroy();
  }
  const lifecycle = [...writes];
  const email = lifecycle.filter((w) => w.kind === "OUTBOX");
  const rows = PROJECTION_SETS.flatMap((set) => [
    price(lifecycle, "invoice lifecycle", set),
    price(email, "its email (outbox record)", set),
  ]);
  const writesByKind: Record<string, number> = {};
  for (const w of lifecycle) writesByKind[w.kind] = (writesByKind[w.kind] ?? 0) + 1;
  const localReported = { writeUnits: meter.writeUnits, readUnits: meter.readUnits };
  return { rows, localReported, writesByKind };
}

export function printWriteUnits(figures: WriteUnitFigures): void {
  console.log("Write units per invoice lifecycle and per email, by table and index (computed from the items)");
  console.table(figures.rows);
  console.log(`writes per kind of item in the lifecycle: ${JSON.stringify(figures.writesByKind)}`);
  console.log(
    `DynamoDB Local's own ConsumedCapacity for the lifecycle (this table's projections): ${JSON.stringify(figures.localReported)}`,
  );
}
