import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { Ctx } from "../deps";
import { statusPartition } from "../db/keys";
import { ValidationError } from "../errors";
import type { InvoiceStatus } from "../invoices/model";
import { centsOf, formatMoney, parseTaxRate } from "../money/money";
import { readAggregates } from "./aggregates";
import { FIGURES, TAX_AMOUNT, TAXABLE, type Figure } from "./contribution";
import type { AgingReport, RevenueRow, TaxRow } from "./resource";

/**
 * The three reports of API.md section 18 (docs/reports.md). Revenue and tax read the aggregate
 * items of the months asked for (one Query: at most one item per month and currency), never the
 * records; aging reads the open invoices only, through the byStatus partitions of the statuses that
 * can owe money (finalized, sent, overdue), never paid, void or draft ones.
 */
interface MonthQuery {
  from?: string;
  to?: string;
}

const MAX_MONTHS_APART = 36;

const monthIndex = (month: string): number => Number(month.slice(0, 4)) * 12 + Number(month.slice(5, 7)) - 1;
const monthAt = (index: number): string =>
  `${String(Math.floor(index / 12)).padStart(4, "0")}-${String((index % 12) + 1).padStart(2, "0")}`;

/**
 * The months of a report: `from`…`to` inclusive; absent, the last 12 months up to the current one
 * (a `to` alone: the 12 months up to it; a `from` alone: from it to the current month).
 */
export function monthsOf(now: Date, query: MonthQuery): string[] {
  const to = query.to ?? (query.from === undefined ? now.toISOString().slice(0, 7) : maxMonth(query.from, now));
  const from = query.from ?? monthAt(monthIndex(to) - 11);
  const span = monthIndex(to) - monthIndex(from);
  if (span < 0) {
    throw new ValidationError([
      { path: "from", message: `must not be after to (${to})` },
      { path: "to", message: `must not be before from (${from})` },
    ]);
  }
  if (span > MAX_MONTHS_APART) {
    throw new ValidationError([
      { path: "from", message: `from and to must be at most ${MAX_MONTHS_APART} months apart` },
      { path: "to", message: `from and to must be at most ${MAX_MONTHS_APART} months apart` },
    ]);
  }
  return Array.from({ length: span + 1 }, (_, i) => monthAt(monthIndex(from) + i));
}

/** A lone `from` in the future reports up to itself rather than failing as "after to". */
const maxMonth = (from: string, now: Date): string => {
  const current = now.toISOString().slice(0, 7);
  return monthIndex(from) > monthIndex(current) ? from : current;
};

/** An aggregate's number (a JS number for a safe integer, a bigint beyond) as a bigint. */
const big = (value: unknown): bigint =>
  typeof value === "bigint" ? value : typeof value === "number" ? BigInt(value) : 0n;

export async function revenueReport(ctx: Ctx, query: MonthQuery): Promise<RevenueRow[]> {
  const months = monthsOf(ctx.clock(), query);
  const items = await readAggregates(ctx.db, ctx.userId, months[0]!, months[months.length - 1]!);
  const cells = new Map<string, Record<string, unknown>>();
  const active = new Set<string>();
  for (const item of items) {
    const [month, currency] = String(item.cell).split("#") as [string, string];
    cells.set(`${month}#${currency}`, item);
    if (FIGURES.some((figure) => big(item[figure]) !== 0n)) active.add(currency);
  }
  const currencies = [...active].sort();
  return months.flatMap((month) =>
    currencies.map((currency) => {
      const item = cells.get(`${month}#${currency}`) ?? {};
      const f = (figure: Figure) => big(item[figure]);
      return {
        month,
        currency,
        invoiced: formatMoney(f("invoiced")),
        credited: formatMoney(f("credited")),
        voided: formatMoney(f("voided")),
        net: formatMoney(f("invoiced") - f("credited") - f("voided")),
        collected: formatMoney(f("collected")),
        invoiceCount: Number(f("invoiceCount")),
        creditNoteCount: Number(f("creditNoteCount")),
        paymentCount: Number(f("paymentCount")),
      };
    }),
  );
}

export async function taxReport(ctx: Ctx, query: MonthQuery): Promise<TaxRow[]> {
  const months = monthsOf(ctx.clock(), query);
  const items = await readAggregates(ctx.db, ctx.userId, months[0]!, months[months.length - 1]!);
  const rows = new Map<string, { currency: string; category: string; rate: string; taxable: bigint; tax: bigint }>();
  for (const item of items) {
    const currency = String(item.cell).split("#")[1]!;
    for (const [name, value] of Object.entries(item)) {
      const taxable = name.startsWith(TAXABLE);
      if (!taxable && !name.startsWith(TAX_AMOUNT)) continue;
      const [category, rate] = name.slice((taxable ? TAXABLE : TAX_AMOUNT).length).split("#") as [string, string];
      const key = `${currency}#${category}#${rate}`;
      const row = rows.get(key) ?? { currency, category, rate, taxable: 0n, tax: 0n };
      if (taxable) row.taxable += big(value);
      else row.tax += big(value);
      rows.set(key, row);
    }
  }
  const rateOf = (rate: string): bigint => {
    const parsed = parseTaxRate(rate);
    return parsed.ok ? parsed.value : 0n;
  };
  return [...rows.values()]
    .filter((row) => row.taxable !== 0n || row.tax !== 0n)
    .sort((a, b) => {
      if (a.currency !== b.currency) return a.currency < b.currency ? -1 : 1;
      const ra = rateOf(a.rate);
      const rb = rateOf(b.rate);
      if (ra !== rb) return ra > rb ? -1 : 1;
      return a.category < b.category ? -1 : a.category > b.category ? 1 : 0;
    })
    .map((row) => ({
      currency: row.currency,
      taxCategory: row.category as TaxRow["taxCategory"],
      taxRate: row.rate,
      taxableAmount: formatMoney(row.taxable),
      taxAmount: formatMoney(row.tax),
    }));
}

/** The statuses in which an invoice can owe money: an open invoice is in one of them with amountDue > 0. */
const OPEN_STATUSES: readonly InvoiceStatus[] = ["finalized", "sent", "overdue"];
const DAY_MS = 86_400_000;
const BUCKETS = ["current", "overdue1to30", "overdue31to60", "overdue61to90", "overdueOver90"] as const;

/** ceil((asOf − dueDate) / 1 day): ≤ 0 current, 1–30, 31–60, 61–90, > 90. */
function bucketOf(asOf: Date, dueDate: string | null | undefined): (typeof BUCKETS)[number] {
  if (!dueDate) return "current";
  const days = Math.ceil((asOf.getTime() - Date.parse(dueDate)) / DAY_MS);
  if (days <= 0) return "current";
  if (days <= 30) return "overdue1to30";
  if (days <= 60) return "overdue31to60";
  if (days <= 90) return "overdue61to90";
  return "overdueOver90";
}

interface Sums {
  buckets: Record<(typeof BUCKETS)[number], bigint>;
  count: number;
}

export async function agingReport(ctx: Ctx, asOf: Date): Promise<AgingReport> {
  const totals = new Map<string, Sums>();
  const clients = new Map<
    string,
    Sums & { clientId: number; currency: string; clientName: string; nameFrom: number }
  >();
  for (const status of OPEN_STATUSES) {
    for (const invoice of await openInvoices(ctx, status)) {
      const due =
        centsOf(String(invoice.total)) -
        centsOf(String(invoice.amountPaid)) -
        centsOf(String(invoice.creditedAmount ?? "0.00"));
      if (due <= 0n) continue;
      const currency = String(invoice.currency);
      const bucket = bucketOf(asOf, invoice.dueDate as string | null);
      const total = totals.get(currency) ?? emptySums();
      totals.set(currency, total);
      const clientKey = `${String(invoice.clientId).padStart(12, "0")}#${currency}`;
      const client = clients.get(clientKey) ?? {
        ...emptySums(),
        clientId: Number(invoice.clientId),
        currency,
        clientName: String(invoice.clientName),
        nameFrom: 0,
      };
      clients.set(clientKey, client);
      // The name on the client's most recent open invoice (each is a copy taken at its finalize).
      if (Number(invoice.id) > client.nameFrom) {
        client.clientName = String(invoice.clientName);
        client.nameFrom = Number(invoice.id);
      }
      for (const sums of [total, client]) {
        sums.buckets[bucket] += due;
        sums.count++;
      }
    }
  }
  const row = (currency: string, sums: Sums) => ({
    currency,
    ...(Object.fromEntries(BUCKETS.map((b) => [b, formatMoney(sums.buckets[b])])) as Record<
      (typeof BUCKETS)[number],
      string
    >),
    total: formatMoney(BUCKETS.reduce((sum, b) => sum + sums.buckets[b], 0n)),
    invoiceCount: sums.count,
  });
  return {
    asOf: asOf.toISOString(),
    totals: [...totals.keys()].sort().map((currency) => row(currency, totals.get(currency)!)),
    clients: [...clients.keys()].sort().map((key) => {
      const c = clients.get(key)!;
      return { clientId: c.clientId, clientName: c.clientName, ...row(c.currency, c) };
    }),
  };
}

const emptySums = (): Sums => ({
  buckets: { current: 0n, overdue1to30: 0n, overdue31to60: 0n, overdue61to90: 0n, overdueOver90: 0n },
  count: 0,
});

const AGING_FIELDS = ["id", "clientId", "clientName", "currency", "total", "amountPaid", "creditedAmount", "dueDate"];

/** The user's invoices in one open status: their byStatus partition, only the fields aging needs. */
async function openInvoices(ctx: Ctx, status: InvoiceStatus): Promise<Record<string, unknown>[]> {
  const names = Object.fromEntries(AGING_FIELDS.map((field, i) => [`#a${i}`, field]));
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await ctx.db.doc.send(
      new QueryCommand({
        TableName: ctx.db.table,
        IndexName: "byStatus",
        KeyConditionExpression: "gsi1pk = :p",
        ExpressionAttributeValues: { ":p": statusPartition(ctx.userId, "INVOICE", status) },
        ProjectionExpression: Object.keys(names).join(", "),
        ExpressionAttributeNames: names,
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}
