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

/**
 * Line items and totals, shared by invoices, estimates and recurring schedules.
 * Inputs arrive already validated by the HTTP schemas (see functions/src/schemas), so parsing here
 * cannot fail except through a programming error.
 */

export interface LineItemInput {
  description: string;
  quantity?: string | number;
  unitPrice: string | number;
  taxRate?: string | number;
}

/** A line as stored and as returned: every number a formatted decimal string. */
export interface LineItem {
  id: number;
  description: string;
  quantity: string;
  unitPrice: string;
  taxRate: string;
  amount: string;
  sortOrder: number;
}

export interface Totals {
  subtotal: string;
  taxTotal: string;
  total: string;
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
      amount: formatMoney(lineAmount(quantity, unitPrice)),
      sortOrder: index,
    };
  });
}

/** Copies lines into another document (estimate → invoice, schedule → invoice) with fresh ids. */
export function copyLineItems(lines: readonly LineItem[], firstId = 1): LineItem[] {
  return lines.map((line, index) => ({ ...line, id: firstId + index, sortOrder: index }));
}

/** subtotal = Σ amount, taxTotal = Σ round(amount × taxRate), total = subtotal + taxTotal. */
export function computeTotals(lines: readonly LineItem[]): Totals {
  let subtotal = 0n;
  let taxTotal = 0n;
  for (const line of lines) {
    const amount = centsOf(line.amount);
    subtotal += amount;
    taxTotal += lineTax(amount, must(parseTaxRate(line.taxRate), "taxRate"));
  }
  return { subtotal: formatMoney(subtotal), taxTotal: formatMoney(taxTotal), total: formatMoney(subtotal + taxTotal) };
}

/** The id the next line added to a document gets. */
export function nextLineId(lines: readonly LineItem[], previousNext = 1): number {
  return lines.reduce((next, line) => Math.max(next, line.id + 1), previousNext);
}
