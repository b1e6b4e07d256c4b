import { taxBreakdown, type LineItem, type TaxBreakdownEntry } from "../documents/line-items";
import { centsOf } from "../money/money";

/**
 * What one record counts in the monthly reports (API.md section 18; docs/reports.md): its
 * CONTRIBUTION, a set of figures per (month, currency) cell, as a pure function of the record as
 * it stands. The reports are the sum of every record's contribution, kept in aggregate items
 * (aggregates.ts); a change of a record moves the aggregates by (new contribution − counted one).
 *
 * - an invoice counts once it is issued (has its number): `invoiced` += total, `invoiceCount` += 1
 *   and its tax breakdown, in the month of its `issueDate`; once void, also `voided` += total −
 *   creditedAmount and its breakdown less its credit notes' (all of them: none can follow a void),
 *   taken off in the month of its `voidedAt`. Its amounts never change after finalize, and nothing
 *   changes a void invoice, so both parts stay in their months for good;
 * - a credit note: `credited` += total, `creditNoteCount` += 1, its breakdown taken off, in the
 *   month of its `issueDate`;
 * - a payment, unless `needs_refund`: `collected` += amount − refundedAmount, `paymentCount` += 1,
 *   in the month of its `paidAt`, as it stands now (a refund lowers that month; a deleted payment
 *   contributes nothing).
 *
 * A cell's figures are named as the aggregate item's attributes (FIGURES, and per tax entry
 * `taxable#<category>#<rate>` and `taxAmount#<category>#<rate>`), in integer cents or counts.
 */
export const FIGURES = [
  "invoiced",
  "credited",
  "voided",
  "collected",
  "invoiceCount",
  "creditNoteCount",
  "paymentCount",
] as const;
export type Figure = (typeof FIGURES)[number];

export const TAXABLE = "taxable#";
export const TAX_AMOUNT = "taxAmount#";

/** cell (`<yyyy-mm>#<currency>`) → attribute → amount in cents (or a count). */
export type Contribution = Map<string, Map<string, bigint>>;

type Item = Record<string, unknown>;

/** The kinds of record that count, by sort key; every other item (the reports' own included) counts nothing. */
type CountedKind = "invoice" | "payment" | "credit_note";
export function countedKind(sk: unknown): CountedKind | undefined {
  if (typeof sk !== "string") return undefined;
  if (/^INVOICE#\d+$/.test(sk)) return "invoice";
  if (/^PAYMENT#\d+#\d+$/.test(sk)) return "payment";
  if (/^CREDITNOTE#\d+$/.test(sk)) return "credit_note";
  return undefined;
}

const cellOf = (month: string, currency: string): string => `${month}#${currency}`;

/** `2026-11` of an ISO time. */
function monthOf(isoTime: unknown): string {
  if (typeof isoTime !== "string" || !/^\d{4}-\d{2}/.test(isoTime)) throw new Error(`not an ISO time: ${isoTime}`);
  return isoTime.slice(0, 7);
}

const money = (value: unknown): bigint => (typeof value === "string" ? centsOf(value) : 0n);

/**
 * What decides a record's contribution, read from its image alone: equal facts, equal
 * contribution. The stream subscriber compares the facts before and after a change to skip, with no
 * read, the many changes that move no figure (a send, a payment's effect on its invoice's status).
 * A void invoice's credit notes are not among them: they are fixed once it is void.
 */
export function factsOf(item: Item | undefined): string | undefined {
  if (!item) return undefined;
  switch (countedKind(item.sk)) {
    case "invoice": {
      if (item.invoiceNumber == null || typeof item.issueDate !== "string") return undefined;
      const issued = [item.issueDate, item.currency, item.total, taxBreakdown(item.lineItems as LineItem[])];
      if (item.status !== "void") return JSON.stringify(issued);
      return JSON.stringify([...issued, voidMonth(item), item.creditedAmount ?? "0.00"]);
    }
    case "credit_note":
      return JSON.stringify([item.issueDate, item.currency, item.total, item.taxBreakdown]);
    case "payment":
      if (item.status === "needs_refund") return undefined;
      return JSON.stringify([item.paidAt, item.currency, item.amount, item.refundedAmount, item.status]);
    default:
      return undefined;
  }
}

/**
 * The month a void invoice's void counts in: its `voidedAt`; an invoice voided before that field
 * existed has only its `updatedAt`, which nothing moves once it is void.
 */
const voidMonth = (invoice: Item): string => monthOf(invoice.voidedAt ?? invoice.updatedAt);

/** Whether contributing this void invoice needs its credit notes' breakdowns. */
export const needsCreditNotes = (item: Item): boolean =>
  countedKind(item.sk) === "invoice" &&
  item.status === "void" &&
  item.invoiceNumber != null &&
  money(item.creditedAmount) !== 0n;

/**
 * The record's contribution. `creditNoteEntries`: for a void invoice with credit notes
 * (needsCreditNotes), the tax breakdown entries of all its credit notes.
 */
export function contributionOf(
  item: Item | undefined,
  creditNoteEntries: readonly TaxBreakdownEntry[] = [],
): Contribution {
  const out: Contribution = new Map();
  if (!item || factsOf(item) === undefined) return out;
  const currency = String(item.currency);
  switch (countedKind(item.sk)) {
    case "invoice": {
      const issued = cell(out, monthOf(item.issueDate), currency);
      const entries = taxBreakdown(item.lineItems as LineItem[]);
      add(issued, "invoiced", money(item.total));
      add(issued, "invoiceCount", 1n);
      addEntries(issued, entries, 1n);
      if (item.status === "void") {
        const voided = cell(out, voidMonth(item), currency);
        add(voided, "voided", money(item.total) - money(item.creditedAmount));
        addEntries(voided, entries, -1n);
        addEntries(voided, creditNoteEntries, 1n);
      }
      break;
    }
    case "credit_note": {
      const issued = cell(out, monthOf(item.issueDate), currency);
      add(issued, "credited", money(item.total));
      add(issued, "creditNoteCount", 1n);
      addEntries(issued, item.taxBreakdown as TaxBreakdownEntry[], -1n);
      break;
    }
    case "payment": {
      const paid = cell(out, monthOf(item.paidAt), currency);
      add(paid, "collected", money(item.amount) - money(item.refundedAmount));
      add(paid, "paymentCount", 1n);
      break;
    }
  }
  return prune(out);
}

/** after − before, cell by cell; cells and attributes whose difference is 0 left out. */
export function difference(after: Contribution, before: Contribution): Contribution {
  const out: Contribution = new Map();
  for (const [key, figures] of after) for (const [name, value] of figures) add(cell(out, key), name, value);
  for (const [key, figures] of before) for (const [name, value] of figures) add(cell(out, key), name, -value);
  return prune(out);
}

/** As stored in the ledger (JSON: bigints as decimal strings) and back. */
export const serialize = (c: Contribution): string =>
  JSON.stringify(
    Object.fromEntries([...c].map(([key, f]) => [key, Object.fromEntries([...f].map(([n, v]) => [n, String(v)]))])),
  );
export function deserialize(text: unknown): Contribution {
  if (typeof text !== "string") return new Map();
  const raw = JSON.parse(text) as Record<string, Record<string, string>>;
  return new Map(
    Object.entries(raw).map(([key, f]) => [key, new Map(Object.entries(f).map(([n, v]) => [n, BigInt(v)]))]),
  );
}

function cell(c: Contribution, month: string, currency?: string): Map<string, bigint> {
  const key = currency === undefined ? month : cellOf(month, currency);
  let figures = c.get(key);
  if (!figures) c.set(key, (figures = new Map()));
  return figures;
}

function add(figures: Map<string, bigint>, name: string, value: bigint): void {
  figures.set(name, (figures.get(name) ?? 0n) + value);
}

function addEntries(figures: Map<string, bigint>, entries: readonly TaxBreakdownEntry[], sign: bigint): void {
  for (const entry of entries ?? []) {
    const key = `${entry.taxCategory}#${entry.taxRate}`;
    add(figures, `${TAXABLE}${key}`, sign * centsOf(entry.taxableAmount));
    add(figures, `${TAX_AMOUNT}${key}`, sign * centsOf(entry.taxAmount));
  }
}

function prune(c: Contribution): Contribution {
  for (const [key, figures] of c) {
    for (const [name, value] of figures) if (value === 0n) figures.delete(name);
    if (figures.size === 0) c.delete(key);
  }
  return c;
}
