import {
  centsOf,
  formatMoney,
  formatQuantity,
  formatTaxRate,
  lineAmount,
  lineTax,
  parseMoney,
  parseQuantity,
  parseTaxRate,
} from "../money/money";
import type { LineItem, TaxBreakdownEntry, TaxCategory, Totals } from "./resource";

/**
 * Line items and totals, shared by invoices, estimates and recurring schedules.
 * Inputs arrive already validated by the HTTP schemas (see functions/src/schemas), so parsing here
 * cannot fail except through a programming error.
 */

/** The categories that charge no tax for a reason the document must state (taxExemptionReason). */
export const NEEDS_EXEMPTION_REASON: readonly TaxCategory[] = [
  "exempt",
  "reverse_charge",
  "intra_community",
  "export",
  "outside_scope",
];

export interface LineItemInput {
  description: string;
  quantity?: string | number;
  unitPrice: string | number;
  taxRate?: string | number;
  taxCategory?: TaxCategory;
}

/** A line as stored and as returned: its shape is the response schema (./resource.ts). */
export { TAX_CATEGORIES } from "./resource";
export type { LineItem, TaxBreakdownEntry, TaxCategory, Totals } from "./resource";

/**
 * A line's category: the one given, else `standard` when it charges tax and `zero_rated` when not.
 * Lines stored before categories existed read the same way.
 */
export const defaultTaxCategory = (taxRate: bigint): TaxCategory => (taxRate > 0n ? "standard" : "zero_rated");

/** Why a (category, rate) pair is not allowed, or null: standard charges tax, every other category none. */
export function taxCategoryProblem(category: TaxCategory, taxRate: bigint): string | null {
  if (category === "standard") return taxRate > 0n ? null : "standard needs a taxRate above 0";
  return taxRate === 0n ? null : `${category} needs taxRate 0`;
}

function must(result: ReturnType<typeof parseMoney>, what: string): bigint {
  if (!result.ok) throw new Error(`unvalidated ${what}: ${result.reason}`);
  return result.value;
}

/** Builds stored lines from inputs; ids start at `firstId` and increase (never reused in a document). */
export function buildLineItems(inputs: readonly LineItemInput[], firstId: number): LineItem[] {
  return inputs.map((input, index) => {
    const quantity = must(parseQuantity(input.quantity ?? "1"), "quantity");
    const unitPrice = must(parseMoney(input.unitPrice), "unitPrice");
    const taxRate = must(parseTaxRate(input.taxRate ?? "0"), "taxRate");
    return {
      id: firstId + index,
      description: input.description,
      quantity: formatQuantity(quantity),
      unitPrice: formatMoney(unitPrice),
      taxRate: formatTaxRate(taxRate),
      taxCategory: input.taxCategory ?? defaultTaxCategory(taxRate),
      amount: formatMoney(lineAmount(quantity, unitPrice)),
      sortOrder: index,
    };
  });
}

/** Copies lines into another document (estimate → invoice, schedule → invoice) with fresh ids. */
export function copyLineItems(lines: readonly LineItem[], firstId = 1): LineItem[] {
  return readLineItems(lines).map((line, index) => ({ ...line, id: firstId + index, sortOrder: index }));
}

/** Stored lines as the API shows them: every field present (a category for lines stored before them). */
export function readLineItems(lines: readonly LineItem[]): LineItem[] {
  return lines.map((line) => ({
    id: line.id,
    description: line.description,
    quantity: line.quantity,
    unitPrice: line.unitPrice,
    taxRate: line.taxRate,
    taxCategory: line.taxCategory ?? defaultTaxCategory(must(parseTaxRate(line.taxRate), "taxRate")),
    amount: line.amount,
    sortOrder: line.sortOrder,
  }));
}

/**
 * One entry per distinct (category, rate), by rate descending, then category name:
 * taxableAmount = Σ amount and taxAmount = Σ round(amount × rate) of its lines (or `taxes`, as for
 * computeTotals) — the very sums computeTotals makes, grouped, so the entries add up exactly to
 * subtotal and taxTotal.
 */
export function taxBreakdown(lines: readonly LineItem[], taxes?: readonly bigint[]): TaxBreakdownEntry[] {
  const groups = new Map<string, { category: TaxCategory; rate: bigint; taxable: bigint; tax: bigint }>();
  for (const [index, line] of readLineItems(lines).entries()) {
    const rate = must(parseTaxRate(line.taxRate), "taxRate");
    const amount = centsOf(line.amount);
    const key = `${line.taxCategory}|${rate}`;
    const group = groups.get(key) ?? { category: line.taxCategory, rate, taxable: 0n, tax: 0n };
    group.taxable += amount;
    group.tax += taxes?.[index] ?? lineTax(amount, rate);
    groups.set(key, group);
  }
  return [...groups.values()]
    .sort((a, b) =>
      a.rate === b.rate ? (a.category < b.category ? -1 : a.category > b.category ? 1 : 0) : a.rate > b.rate ? -1 : 1,
    )
    .map((g) => ({
      taxCategory: g.category,
      taxRate: formatTaxRate(g.rate),
      taxableAmount: formatMoney(g.taxable),
      taxAmount: formatMoney(g.tax),
    }));
}

/**
 * subtotal = Σ amount, taxTotal = Σ round(amount × taxRate), total = subtotal + taxTotal.
 * `taxes`, when given, is each line's tax instead of its own rounding: a credit note's part of an
 * invoice line is capped by what of the line's tax is left (credit-notes/line-caps.ts).
 */
export function computeTotals(lines: readonly LineItem[], taxes?: readonly bigint[]): Totals {
  let subtotal = 0n;
  let taxTotal = 0n;
  for (const [index, line] of lines.entries()) {
    const amount = centsOf(line.amount);
    subtotal += amount;
    taxTotal += taxes?.[index] ?? lineTax(amount, must(parseTaxRate(line.taxRate), "taxRate"));
  }
  return { subtotal: formatMoney(subtotal), taxTotal: formatMoney(taxTotal), total: formatMoney(subtotal + taxTotal) };
}

/** The id the next line added to a document gets. */
export function nextLineId(lines: readonly LineItem[], previousNext = 1): number {
  return lines.reduce((next, line) => Math.max(next, line.id + 1), previousNext);
}
