import { GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { Deps } from "../deps";
import { creditNotesOfInvoicePartition } from "../credit-notes/model";
import type { Db } from "../db/dynamodb";
import { commit, type Write } from "../db/commit";
import { userPk } from "../db/keys";
import { optimistic, Raced } from "../db/optimistic";
import type { TaxBreakdownEntry } from "../documents/line-items";
import { centsOf } from "../money/money";
import {
  contributionOf,
  deserialize,
  difference,
  needsCreditNotes,
  serialize,
  type Contribution,
} from "./contribution";

/**
 * The monthly reports' storage (docs/reports.md):
 * - AGGREGATE items, pk USER#<u>, sk REPORT#<yyyy-mm>#<currency>: the figures of contribution.ts
 *   summed over the user's records, as DynamoDB numbers (exact integers of cents and counts, moved
 *   only by ADD). A report of N months reads at most N items per currency, whatever the records.
 * - LEDGER items, pk USER#<u>, sk REPORTED#<the record's sk>: per counted record, the `version` of
 *   the record the aggregates count and what it contributes there. Invariant: every aggregate is the
 *   sum of the ledger's contributions, because both only move together, in one transaction.
 *
 * reconcile() brings one record's count to a state of that record: read its ledger entry; unless it
 * counts this version or a newer one already, ADD (new contribution − counted one) to the aggregates
 * and put the ledger entry, conditioned on the entry read — one transaction, one optimistic loop
 * (db/optimistic.ts). The stream subscriber calls it with each change's new image; the backfill
 * (backfill.ts) with each record as it reads it. So a redelivered stream record, a retried batch,
 * a stale image and a backfill running beside the stream all find their version counted and change
 * nothing: each version of a record moves the aggregates at most once, and never backwards.
 * A removed record (a deleted payment) leaves a tombstone that nothing revives, kept (TTL) well
 * beyond the stream's 24-hour retention, after which no image of it can come again.
 * A live record's entry has no TTL: it holds what the aggregates count for the record, the base of
 * every later delta (a refund or a void years after), so it lives as long as its record.
 */
const AGGREGATE_PREFIX = "REPORT#";
const LEDGER_PREFIX = "REPORTED#";
/**
 * 15 days. A stream record is handled within the stream's 24 hours (by the subscriber, or by
 * `replay-stream-failures`, which reads the stream again); the failure queue keeps its pointers 14
 * days (infra/stream.ts). The tombstone outlives both, so even a replay at the queue's last day
 * finds the record counted as removed.
 */
export const TOMBSTONE_SECONDS = 15 * 86_400;

const aggregateKey = (userId: string, cell: string) => ({
  pk: userPk(userId),
  sk: `${AGGREGATE_PREFIX}${cell}`,
});
const ledgerKey = (userId: string, recordSk: string) => ({ pk: userPk(userId), sk: `${LEDGER_PREFIX}${recordSk}` });

interface LedgerItem {
  pk: string;
  sk: string;
  version: number;
  contribution: string;
  removed?: true;
  expiresAt?: number;
}

/** A record's state to count: its image (with its `version`), or removed. */
type RecordState = { image: Record<string, unknown> } | { removed: true };

export type Reconciled = "applied" | "unchanged" | "already_counted";

export async function reconcile(
  deps: Pick<Deps, "db" | "clock">,
  userId: string,
  recordSk: string,
  state: RecordState,
): Promise<Reconciled> {
  const { db } = deps;
  return optimistic("report ledger", async () => {
    const read = await db.doc.send(
      new GetCommand({ TableName: db.table, Key: ledgerKey(userId, recordSk), ConsistentRead: true }),
    );
    const ledger = read.Item as LedgerItem | undefined;
    if (ledger?.removed) return "already_counted";
    const version = "image" in state ? Number(state.image.version ?? 0) : Number.POSITIVE_INFINITY;
    if (ledger && ledger.version >= version) return "already_counted";
    const target =
      "image" in state ? contributionOf(state.image, await creditNoteEntriesOf(db, userId, state.image)) : new Map();
    const delta = difference(target, deserialize(ledger?.contribution));
    let entry: LedgerItem;
    if ("image" in state) {
      if (delta.size === 0) return "unchanged";
      entry = { ...ledgerKey(userId, recordSk), version, contribution: serialize(target) };
    } else {
      // Even when it counted nothing, the tombstone keeps a redelivered older image from counting it.
      entry = {
        ...ledgerKey(userId, recordSk),
        version: ledger?.version ?? 0,
        contribution: serialize(target),
        removed: true,
        expiresAt: Math.floor(deps.clock().getTime() / 1000) + TOMBSTONE_SECONDS,
      };
    }
    await commit({ db }, [ledgerWrite(db, entry, ledger), ...aggregateWrites(db, userId, delta)]);
    return delta.size === 0 ? "unchanged" : "applied";
  });
}

function ledgerWrite(db: Db, entry: LedgerItem, read: LedgerItem | undefined): Write {
  const condition = read
    ? {
        ConditionExpression: "#version = :version AND attribute_not_exists(#removed)",
        ExpressionAttributeNames: { "#version": "version", "#removed": "removed" },
        ExpressionAttributeValues: { ":version": read.version },
      }
    : { ConditionExpression: "attribute_not_exists(pk)" };
  return { op: { Put: { TableName: db.table, Item: entry, ...condition } }, onConditionFailed: () => new Raced() };
}

/** One ADD per aggregate cell the delta touches (a record touches at most two). */
function aggregateWrites(db: Db, userId: string, delta: Contribution): Write[] {
  return [...delta].map(([cell, figures]) => {
    const names: Record<string, string> = { "#cell": "cell" };
    const values: Record<string, unknown> = { ":cell": cell };
    const adds = [...figures].map(([name, value], i) => {
      names[`#f${i}`] = name;
      values[`:f${i}`] = value; // a bigint: marshalled as a DynamoDB number, exact to 38 digits
      return `#f${i} :f${i}`;
    });
    return {
      op: {
        Update: {
          TableName: db.table,
          Key: aggregateKey(userId, cell),
          UpdateExpression: `SET #cell = :cell ADD ${adds.join(", ")}`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        },
      },
    };
  });
}

/**
 * The breakdowns of a void invoice's credit notes (their own index partition, a handful of items).
 * The index is eventually consistent, so the sum of their totals must be the invoice's
 * `creditedAmount` (every credit note raised it in its own transaction): short of it, one is not
 * visible yet, and the record fails to be tried again (the stream retries it).
 */
async function creditNoteEntriesOf(
  db: Db,
  userId: string,
  invoice: Record<string, unknown>,
): Promise<TaxBreakdownEntry[]> {
  if (!needsCreditNotes(invoice)) return [];
  const entries: TaxBreakdownEntry[] = [];
  let total = 0n;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.doc.send(
      new QueryCommand({
        TableName: db.table,
        IndexName: "byStatus",
        KeyConditionExpression: "gsi1pk = :p",
        ExpressionAttributeValues: { ":p": creditNotesOfInvoicePartition(userId, Number(invoice.id)) },
        ExclusiveStartKey: start,
      }),
    );
    for (const note of page.Items ?? []) {
      total += centsOf(String(note.total));
      entries.push(...((note.taxBreakdown as TaxBreakdownEntry[]) ?? []));
    }
    start = page.LastEvaluatedKey;
  } while (start);
  if (total !== centsOf(String(invoice.creditedAmount))) {
    throw new Error(`credit notes of invoice ${String(invoice.id)} not all visible yet`);
  }
  return entries;
}

/** The aggregate items of the months `from`…`to` (inclusive, `YYYY-MM`), every currency: one Query. */
export async function readAggregates(
  db: Db,
  userId: string,
  from: string,
  to: string,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.doc.send(
      new QueryCommand({
        TableName: db.table,
        KeyConditionExpression: "pk = :pk AND sk BETWEEN :from AND :to",
        ExpressionAttributeValues: {
          ":pk": userPk(userId),
          ":from": `${AGGREGATE_PREFIX}${from}#`,
          ":to": `${AGGREGATE_PREFIX}${to}#~`,
        },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}
