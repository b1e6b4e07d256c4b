import { BatchWriteCommand } from "@aws-sdk/lib-dynamodb";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { withIndexKeys } from "@invoicing/core/db/keys";
import { buildLineItems } from "@invoicing/core/documents/line-items";
import { newDraftInvoice } from "@invoicing/core/invoices/model";
import { backfillReports } from "@invoicing/core/reports/backfill";
import { countChange } from "@invoicing/core/reports/stream";
import type { StreamRecord } from "@invoicing/core/stream/subscriber";
import type { StreamChange } from "@invoicing/core/stream/derive";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { createStreamReader } from "@invoicing/local/stream-reader";
import { request } from "../test/support/env";
import { createWorld, type World } from "./world";

/**
 * The reports' cost (docs/reports.md):
 * - items read by a 12-month revenue and tax report, and by aging, with 10 and with 10,000 invoices
 *   (10 of them open in both): goal, the same figures for both;
 * - what the backfill costs per record (the one-off rebuild over the 10,000);
 * - the stream subscriber's extra requests and items written per change, by kind of change:
 *   countChange (reports/stream.ts) run on each change's stream records with a metered client.
 */
interface ReportReadFigure {
  invoices: number;
  report: string;
  requests: number;
  itemsRead: number;
  readUnits: number;
}
interface ChangeFigure {
  change: string;
  records: number;
  requests: number;
  itemsRead: number;
  itemsWritten: number;
}
interface ReportFigures {
  reads: ReportReadFigure[];
  readsGoalMet: boolean;
  backfill: { records: number; requests: number; itemsWritten: number; requestsPerRecord: number };
  changes: ChangeFigure[];
}

const OPEN = 10;

/** Items written, per command: counted beside the meter (which counts reads). */
function countWrites(doc: DynamoDBDocumentClient): { written: number; reset(): void } {
  const counter = {
    written: 0,
    reset() {
      this.written = 0;
    },
  };
  doc.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      const command = context.commandName ?? "";
      if (["PutItemCommand", "UpdateItemCommand", "DeleteItemCommand"].includes(command)) counter.written++;
      if (command === "TransactWriteItemsCommand") counter.written += (input.TransactItems as unknown[]).length;
      return next(args);
    },
    { step: "initialize", name: `writes-${Math.random()}` },
  );
  return counter;
}

async function api(world: World, method: string, path: string, body?: unknown) {
  const res = await request(world.app, method, path, body, { Authorization: `Bearer ${world.key}` });
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${res.text.slice(0, 200)}`);
  return res.body;
}

/**
 * `count` issued invoices over ten months of 2026, written directly (the first OPEN sent, the rest
 * paid): both worlds have activity in the same months, so a report's items can be compared.
 */
async function seedInvoices(world: World, clientId: number, count: number): Promise<void> {
  const client = { id: clientId, name: "Acme", email: "ap@acme.test", currency: "EUR", address: null, taxId: null };
  const lines = buildLineItems([{ description: "Consulting", unitPrice: "100.00", taxRate: "0.19" }], 1);
  const items = Array.from({ length: count }, (_, i) => {
    const id = 1000 + i;
    const month = String((i % 10) + 1).padStart(2, "0");
    const draft = newDraftInvoice({ userId: world.userId }, id, client, lines, {}, world.clock.now.toISOString());
    const open = i < OPEN;
    return withIndexKeys({
      ...draft,
      version: 3,
      invoiceNumber: `INV-${String(id).padStart(6, "0")}`,
      status: open ? "sent" : "paid",
      issueDate: `2026-${month}-10T09:00:00.000Z`,
      dueDate: `2026-${month}-20T09:00:00.000Z`,
      amountPaid: open ? "0.00" : draft.total,
      creditedAmount: "0.00",
    });
  });
  const batches: (typeof items)[] = [];
  for (let i = 0; i < items.length; i += 25) batches.push(items.slice(i, i + 25));
  for (let i = 0; i < batches.length; i += 8) {
    await Promise.all(
      batches.slice(i, i + 8).map((batch) =>
        world.deps.db.doc.send(
          new BatchWriteCommand({
            RequestItems: { [world.deps.db.table]: batch.map((Item) => ({ PutRequest: { Item } })) },
          }),
        ),
      ),
    );
  }
}

async function readCosts(endpoint: string, invoices: number) {
  const world = await createWorld(endpoint);
  const writes = countWrites(world.deps.db.doc);
  const client = await api(world, "POST", "/clients", { name: "Acme", currency: "EUR" });
  await seedInvoices(world, client.id, invoices);
  world.meter.reset();
  writes.reset();
  const backfill = await backfillReports(world.deps, world.userId);
  const backfillCost = { records: backfill.records, requests: world.meter.calls, itemsWritten: writes.written };
  const reads: ReportReadFigure[] = [];
  for (const [report, path] of [
    ["revenue, 12 months", "/reports/revenue?from=2026-01&to=2026-12"],
    ["tax, 12 months", "/reports/tax?from=2026-01&to=2026-12"],
    ["aging", "/reports/aging"],
  ] as const) {
    world.meter.reset();
    await api(world, "GET", path);
    reads.push({
      invoices,
      report,
      requests: world.meter.calls,
      itemsRead: world.meter.itemsRead,
      readUnits: Math.round(world.meter.readUnits * 10) / 10,
    });
  }
  return { reads, backfillCost };
}

/** The subscriber's extra work per change: countChange over each change's stream records, metered. */
async function changeCosts(endpoint: string): Promise<ChangeFigure[]> {
  const world = await createWorld(endpoint);
  const writes = countWrites(world.deps.db.doc);
  const tableName = world.deps.db.table;
  let records = 0;
  const handle = async (batch: StreamRecord[]) => {
    for (const record of batch) {
      records++;
      const image = (raw: unknown) => (raw ? unmarshall(raw as never) : undefined);
      await countChange(
        world.deps,
        record.eventName as StreamChange,
        image(record.dynamodb?.OldImage),
        image(record.dynamodb?.NewImage),
      );
    }
    return {};
  };
  const reader = createStreamReader(world.deps, { endpoint, tableName, handle });
  const figures: ChangeFigure[] = [];
  const measure = async (change: string, act: () => Promise<unknown>) => {
    await act();
    world.meter.reset();
    writes.reset();
    records = 0;
    await reader.drain();
    figures.push({
      change,
      records,
      requests: world.meter.calls,
      itemsRead: world.meter.itemsRead,
      itemsWritten: writes.written,
    });
  };
  const client = await api(world, "POST", "/clients", { name: "Acme", currency: "EUR", email: "ap@acme.test" });
  await reader.drain();
  const body = {
    clientId: client.id,
    lineItems: [{ description: "Work", quantity: "2", unitPrice: "100.00", taxRate: "0.19" }],
  };
  let a = 0;
  let b = 0;
  await measure("create a draft", async () => (a = (await api(world, "POST", "/invoices", body)).id));
  await measure("finalize", () => api(world, "POST", `/invoices/${a}/finalize`));
  await measure("send", () => api(world, "POST", `/invoices/${a}/send`));
  let paymentId = 0;
  await measure(
    "payment (partial)",
    async () =>
      (paymentId = (await api(world, "POST", `/invoices/${a}/payments`, { amount: "10.00", paymentMethod: "cash" }))
        .id),
  );
  await measure("payment deleted", () => api(world, "DELETE", `/invoices/${a}/payments/${paymentId}`));
  await measure("credit note (part of a line)", async () => {
    const line = (await api(world, "GET", `/invoices/${a}`)).lineItems[0].id;
    return api(world, "POST", `/invoices/${a}/credit-notes`, { lineItems: [{ invoiceLineId: line, quantity: "1" }] });
  });
  await measure("void (after a credit note)", () => api(world, "POST", `/invoices/${a}/void`));
  await measure("mark-paid", async () => {
    b = (await api(world, "POST", "/invoices", body)).id;
    await api(world, "POST", `/invoices/${b}/finalize`);
    await api(world, "POST", `/invoices/${b}/send`);
    await reader.drain();
    return api(world, "POST", `/invoices/${b}/mark-paid`, { paymentMethod: "cash" });
  });
  await measure("client renamed (no figure moves)", () =>
    api(world, "PATCH", `/clients/${client.id}`, { name: "Acme Ltd" }),
  );
  // Everything above delivered again, by a new reader from the stream's start.
  const again = createStreamReader(world.deps, { endpoint, tableName, handle });
  world.meter.reset();
  writes.reset();
  records = 0;
  await again.drain();
  again.close();
  figures.push({
    change: "all the above delivered again",
    records,
    requests: world.meter.calls,
    itemsRead: world.meter.itemsRead,
    itemsWritten: writes.written,
  });
  reader.close();
  return figures;
}

export async function measureReports(endpoint: string): Promise<ReportFigures> {
  const small = await readCosts(endpoint, 10);
  const large = await readCosts(endpoint, 10_000);
  const reads = [...small.reads, ...large.reads];
  const readsGoalMet = small.reads.every((r, i) => r.itemsRead === large.reads[i]!.itemsRead);
  const b = large.backfillCost;
  return {
    reads,
    readsGoalMet,
    backfill: { ...b, requestsPerRecord: Math.round((b.requests / b.records) * 100) / 100 },
    changes: await changeCosts(endpoint),
  };
}
