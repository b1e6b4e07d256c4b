import type { TestUser } from "../support/env";

/**
 * The reports' independent oracle: API.md section 18 computed straight from the records as the API
 * shows them (GET /invoices, their payments and credit notes), with its own decimal arithmetic —
 * nothing from packages/core. The tests compare every report with it.
 */
interface Entry {
  taxCategory: string;
  taxRate: string;
  taxableAmount: string;
  taxAmount: string;
}
interface Invoice {
  id: number;
  status: string;
  invoiceNumber: string | null;
  currency: string;
  total: string;
  issueDate: string | null;
  updatedAt: string;
  voidedAt?: string | null;
  creditedAmount?: string;
  taxBreakdown: Entry[];
}
interface Payment {
  amount: string;
  refundedAmount: string;
  status: string;
  paidAt: string;
}
interface CreditNote {
  currency: string;
  total: string;
  issueDate: string;
  taxBreakdown: Entry[];
}

/** "-12.30" → -1230n, by the digits. */
export const cents = (money: string): bigint => {
  const match = /^(-?)(\d+)\.(\d{2})$/.exec(money);
  if (!match) throw new Error(`not money: ${money}`);
  const value = BigInt(match[2]!) * 100n + BigInt(match[3]!);
  return match[1] ? -value : value;
};
export const money = (value: bigint): string => {
  const abs = value < 0n ? -value : value;
  return `${value < 0n ? "-" : ""}${abs / 100n}.${String(abs % 100n).padStart(2, "0")}`;
};

export interface Records {
  invoices: Invoice[];
  payments: Payment[][];
  creditNotes: CreditNote[][];
}

async function getOk(user: TestUser, path: string) {
  const res = await user.call("GET", path);
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.text.slice(0, 300)}`);
  return res.body;
}

/** Every invoice of the user, its payments and its credit notes. */
export async function readRecords(user: TestUser): Promise<Records> {
  const invoices: Invoice[] = [];
  for (let offset = 0; ; offset += 200) {
    const page = (await getOk(user, `/invoices?limit=200&offset=${offset}`)) as Invoice[];
    invoices.push(...page);
    if (page.length < 200) break;
  }
  const payments = await Promise.all(invoices.map((i) => getOk(user, `/invoices/${i.id}/payments`)));
  const creditNotes = await Promise.all(invoices.map((i) => getOk(user, `/invoices/${i.id}/credit-notes`)));
  return { invoices, payments, creditNotes };
}

const monthsBetween = (from: string, to: string): string[] => {
  const out: string[] = [];
  let [y, m] = from.split("-").map(Number) as [number, number];
  for (;;) {
    const month = `${String(y).padStart(4, "0")}-${String(m).padStart(2, "0")}`;
    out.push(month);
    if (month === to) return out;
    m++;
    if (m === 13) {
      m = 1;
      y++;
    }
  }
};

const FIELDS = [
  "invoiced",
  "credited",
  "voided",
  "collected",
  "invoiceCount",
  "creditNoteCount",
  "paymentCount",
] as const;

export function expectedRevenue(records: Records, from: string, to: string) {
  const months = monthsBetween(from, to);
  const sums = new Map<string, Record<(typeof FIELDS)[number], bigint>>();
  const at = (iso: string, currency: string) => {
    const key = `${iso.slice(0, 7)}|${currency}`;
    let s = sums.get(key);
    if (!s)
      sums.set(key, (s = Object.fromEntries(FIELDS.map((f) => [f, 0n])) as Record<(typeof FIELDS)[number], bigint>));
    return s;
  };
  records.invoices.forEach((invoice, i) => {
    if (invoice.invoiceNumber !== null && invoice.issueDate) {
      const s = at(invoice.issueDate, invoice.currency);
      s.invoiced += cents(invoice.total);
      s.invoiceCount++;
      if (invoice.status === "void") {
        at(invoice.voidedAt ?? invoice.updatedAt, invoice.currency).voided +=
          cents(invoice.total) - cents(invoice.creditedAmount ?? "0.00");
      }
    }
    for (const p of records.payments[i]!) {
      if (p.status === "needs_refund") continue;
      const s = at(p.paidAt, invoice.currency);
      s.collected += cents(p.amount) - cents(p.refundedAmount);
      s.paymentCount++;
    }
    for (const note of records.creditNotes[i]!) {
      const s = at(note.issueDate, note.currency);
      s.credited += cents(note.total);
      s.creditNoteCount++;
    }
  });
  const currencies = [
    ...new Set(
      [...sums]
        .filter(([key, s]) => months.includes(key.split("|")[0]!) && FIELDS.some((f) => s[f] !== 0n))
        .map(([key]) => key.split("|")[1]!),
    ),
  ].sort();
  return months.flatMap((month) =>
    currencies.map((currency) => {
      const s = sums.get(`${month}|${currency}`);
      const v = (f: (typeof FIELDS)[number]) => s?.[f] ?? 0n;
      return {
        month,
        currency,
        invoiced: money(v("invoiced")),
        credited: money(v("credited")),
        voided: money(v("voided")),
        net: money(v("invoiced") - v("credited") - v("voided")),
        collected: money(v("collected")),
        invoiceCount: Number(v("invoiceCount")),
        creditNoteCount: Number(v("creditNoteCount")),
        paymentCount: Number(v("paymentCount")),
      };
    }),
  );
}

export function expectedTax(records: Records, from: string, to: string) {
  const months = new Set(monthsBetween(from, to));
  const rows = new Map<string, { taxable: bigint; tax: bigint }>();
  const add = (currency: string, entries: Entry[], sign: bigint) => {
    for (const e of entries) {
      const key = `${currency}|${e.taxCategory}|${e.taxRate}`;
      const row = rows.get(key) ?? { taxable: 0n, tax: 0n };
      row.taxable += sign * cents(e.taxableAmount);
      row.tax += sign * cents(e.taxAmount);
      rows.set(key, row);
    }
  };
  const inRange = (iso: string) => months.has(iso.slice(0, 7));
  records.invoices.forEach((invoice, i) => {
    if (invoice.invoiceNumber === null || !invoice.issueDate) return;
    if (inRange(invoice.issueDate)) add(invoice.currency, invoice.taxBreakdown, 1n);
    const notes = records.creditNotes[i]!;
    for (const note of notes) if (inRange(note.issueDate)) add(note.currency, note.taxBreakdown, -1n);
    if (invoice.status === "void" && inRange(invoice.voidedAt ?? invoice.updatedAt)) {
      // Its entries less those of its credit notes issued before the void (none can come after).
      add(invoice.currency, invoice.taxBreakdown, -1n);
      for (const note of notes) add(invoice.currency, note.taxBreakdown, 1n);
    }
  });
  const rate = (r: string) => BigInt(r.replace(".", "").padEnd(7, "0"));
  return [...rows]
    .filter(([, r]) => r.taxable !== 0n || r.tax !== 0n)
    .map(([key, r]) => {
      const [currency, taxCategory, taxRate] = key.split("|") as [string, string, string];
      return { currency, taxCategory, taxRate, taxableAmount: money(r.taxable), taxAmount: money(r.tax) };
    })
    .sort((a, b) =>
      a.currency !== b.currency
        ? a.currency < b.currency
          ? -1
          : 1
        : rate(a.taxRate) !== rate(b.taxRate)
          ? rate(a.taxRate) > rate(b.taxRate)
            ? -1
            : 1
          : a.taxCategory < b.taxCategory
            ? -1
            : 1,
    );
}
