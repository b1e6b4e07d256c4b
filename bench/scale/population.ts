import { BatchWriteCommand, ScanCommand } from "@aws-sdk/lib-dynamodb";
import type { Deps } from "@invoicing/core/deps";
import { createApiKey } from "@invoicing/core/keys/api-keys";
import { createApp } from "@invoicing/functions/app/create-app";
import { request } from "../../test/support/env";
import { createFreshTable } from "../../test/support/table";
import { dueKeys, type DueJob } from "@invoicing/core/db/keys";
import { withConcurrency } from "@invoicing/core/concurrency";

/**
 * The skewed population of the scale simulation. Three template users are made through the real
 * API on DynamoDB Local (no proxy: making them is not what is measured), then their records are
 * copied under each simulated user's id (every string naming the template's user renamed, the due
 * list's shard recomputed), and that copy is restored into a fresh table for each run.
 *
 * A median user has one item due on the 1st: either a monthly auto-send schedule whose first
 * occurrence is the 1st, or an invoice sent on Nov 22, due Dec 4, whose "3 days before" reminder
 * falls on the 1st (users alternate). A large user has `largeFactor` times as many, half of each.
 * So a month start (Dec 1) has recurring occurrences, reminders and the emails of both to drain.
 */
export interface PopulationSpec {
  users: number;
  /** Share of users that are large (0.01: 1 %). */
  largeShare: number;
  /** A large user's due items as a multiple of the median's (one). */
  largeFactor: number;
}

export interface Population {
  spec: PopulationSpec;
  users: { userId: string; large: boolean }[];
  /** Every record of every simulated user. */
  items: Record<string, unknown>[];
  /** Due items on the 1st: schedules, reminders. */
  due: { recurring: number; reminders: number };
}

export const SETUP_AT = "2026-11-22T09:30:00.000Z";
export const MONTH_START = "2026-12-01T06:00:00.000Z";
const line = { description: "Monthly retainer", quantity: "1", unitPrice: "100.00" };

/** The API as a user of a setup table, failing loudly: what it makes is the simulation's ground. */
export async function setupUser(app: ReturnType<typeof createApp>, db: Deps["db"], userId: string) {
  const { key } = await createApiKey(db, userId, "scale", new Date(SETUP_AT));
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await request(app, method, path, body, { Authorization: `Bearer ${key}` });
    if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${res.text.slice(0, 300)}`);
    return res.body;
  };
  const client = await call("POST", "/clients", { name: `Client of ${userId}`, email: `billing@${userId}.example` });
  return { userId, key, call, clientId: client.id as number };
}

type Call = Awaited<ReturnType<typeof setupUser>>["call"];

const makeSchedule = (call: Call, clientId: number) =>
  call("POST", "/recurring-schedules", {
    clientId,
    frequency: "monthly",
    startDate: "2026-12-01",
    autoSend: true,
    lineItems: [line],
  });

async function makeSentInvoice(call: Call, clientId: number) {
  const invoice = await call("POST", "/invoices", { clientId, lineItems: [line], dueDate: "2026-12-04" });
  await call("POST", `/invoices/${invoice.id}/finalize`);
  await call("POST", `/invoices/${invoice.id}/send`);
}

export async function buildPopulation(endpoint: string, spec: PopulationSpec): Promise<Population> {
  const { db } = await createFreshTable(endpoint, "scale-setup");
  const now = new Date(SETUP_AT);
  // No outbox: the setup's own send emails are not the month start's; they are left out below.
  const app = createApp({ db, clock: () => now, publicBaseUrl: "http://localhost:3000" });
  const half = spec.largeFactor / 2;
  const templates = { large: "tmplLarge", schedule: "tmplSchedule", reminder: "tmplReminder" };
  await Promise.all([
    setupUser(app, db, templates.schedule).then(({ call, clientId }) => makeSchedule(call, clientId)),
    setupUser(app, db, templates.reminder).then(({ call, clientId }) => makeSentInvoice(call, clientId)),
    setupUser(app, db, templates.large).then(async ({ call, clientId }) => {
      const work = Array.from({ length: half }, (_, i) => i);
      await withConcurrency(work, 2, "large template", (i) => makeSchedule(call, clientId).then(() => i));
      await withConcurrency(work, 2, "large template", (i) => makeSentInvoice(call, clientId).then(() => i));
    }),
  ]);
  const byTemplate = new Map<string, Record<string, unknown>[]>();
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await db.doc.send(new ScanCommand({ TableName: db.table, ExclusiveStartKey: startKey }));
    for (const item of out.Items ?? []) {
      const owner = String(item.pk).startsWith("USER#") ? String(item.pk).slice(5) : undefined;
      if (!owner || String(item.sk).startsWith("OUTBOX#")) continue;
      byTemplate.set(owner, [...(byTemplate.get(owner) ?? []), item]);
    }
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  db.doc.destroy();

  const largeCount = Math.max(1, Math.round(spec.users * spec.largeShare));
  const users: Population["users"] = [];
  const items: Record<string, unknown>[] = [];
  const due = { recurring: 0, reminders: 0 };
  for (let i = 0; i < spec.users; i++) {
    const userId = `u${String(i).padStart(5, "0")}`;
    const large = i < largeCount;
    const template = large ? templates.large : i % 2 ? templates.schedule : templates.reminder;
    for (const item of byTemplate.get(template) ?? []) items.push(renamed(item, template, userId));
    users.push({ userId, large });
    due.recurring += large ? half : template === templates.schedule ? 1 : 0;
    due.reminders += large ? half : template === templates.reminder ? 1 : 0;
  }
  return { spec, users, items, due };
}

/** A template's record as `userId`'s: every string naming the template renamed, its due shard recomputed. */
function renamed(item: Record<string, unknown>, template: string, userId: string): Record<string, unknown> {
  const rename = (value: unknown): unknown => {
    if (typeof value === "string") return value.split(template).join(userId);
    if (Array.isArray(value)) return value.map(rename);
    if (value && typeof value === "object" && !(value instanceof Uint8Array))
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rename(v)]));
    return value;
  };
  const copy = rename(item) as Record<string, unknown>;
  if (typeof copy.duePk === "string" && typeof copy.dueSk === "string") {
    const job = copy.duePk.split("#")[1] as DueJob;
    const at = copy.dueSk.split("#")[0]!;
    Object.assign(copy, dueKeys(job, userId, String(copy.sk), at));
  }
  return copy;
}

/**
 * Whether a user's records are on table `shard` of `shards` (the population spread over emulator
 * instances): with two or more, the large users alone on the first (each emulator serves one request
 * at a time, and a large user's month start is most of the work), the others in turn on the rest.
 */
export function onShard(population: Population, shard: number, shards: number): (userId: string) => boolean {
  const small = population.users.filter((u) => !u.large);
  const on = new Set(
    shards === 1
      ? population.users.map((u) => u.userId)
      : shard === 0
        ? population.users.filter((u) => u.large).map((u) => u.userId)
        : small.filter((_, i) => i % (shards - 1) === shard - 1).map((u) => u.userId),
  );
  return (userId) => on.has(userId);
}

/** A fresh table in the DynamoDB Local at `endpoint` holding the population (the users `keep` keeps); its name. */
export async function restorePopulation(
  endpoint: string,
  population: Population,
  keep: (userId: string) => boolean = () => true,
): Promise<string> {
  const { tableName, db } = await createFreshTable(endpoint, "scale");
  const items = population.items.filter((item) => keep(String(item.pk).slice("USER#".length)));
  const batches: Record<string, unknown>[][] = [];
  for (let i = 0; i < items.length; i += 25) batches.push(items.slice(i, i + 25));
  await withConcurrency(batches, 4, "restore", async (batch) => {
    let pending: Record<string, unknown>[] | undefined = batch.map((Item) => ({ PutRequest: { Item } }));
    while (pending?.length) {
      const out = await db.doc.send(new BatchWriteCommand({ RequestItems: { [tableName]: pending as never } }));
      pending = out.UnprocessedItems?.[tableName] as Record<string, unknown>[] | undefined;
    }
  });
  db.doc.destroy();
  return tableName;
}
