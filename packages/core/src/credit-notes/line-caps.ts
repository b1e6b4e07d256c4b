import type { LineItem } from "../documents/line-items";
import type { InvoiceItem } from "../invoices/model";
import { centsOf, formatMoney, lineAmount, lineTax, parseMoney, parseQuantity, parseTaxRate } from "../money/money";

/**
 * A line is never credited more than it was worth (API.md section 17): the credit notes of one
 * invoice line together never exceed its `amount` nor its line tax. Each part of a line rounds on
 * its own (quantity × price, then amount × rate), so three credits of 0.01 of a 0.03 × 0.50 line
 * at 100 % tax would each round 0.005 up to 0.01 and credit 0.06 of a line worth 0.04. A part
 * therefore takes its own rounding or what is left, whichever is less, and the part that credits
 * the line's last quantity takes exactly what is left.
 *
 * What earlier parts took is kept on the invoice item (`creditedLineTotals`), read and written in
 * the credit note's one transaction, like `creditedQuantities`.
 */
export interface LinePart {
  amount: bigint;
  tax: bigint;
}

const must = (result: ReturnType<typeof parseMoney>): bigint => {
  if (!result.ok) throw new Error(`unvalidated decimal: ${result.reason}`);
  return result.value;
};

/** The smaller in size of a part and what is left (a discount line's values are negative). */
const capped = (part: bigint, left: bigint): bigint => {
  const size = (v: bigint) => (v < 0n ? -v : v);
  return size(part) > size(left) ? left : part;
};

/** The line's whole amount and tax, as the invoice charged them. */
function whole(line: LineItem): LinePart {
  const amount = centsOf(line.amount);
  return { amount, tax: lineTax(amount, must(parseTaxRate(line.taxRate))) };
}

/** What earlier credit notes took of each line of the invoice. */
export function creditedSoFar(invoice: InvoiceItem): Map<number, LinePart> {
  const out = new Map<number, LinePart>();
  const stored = invoice.creditedLineTotals ?? {};
  for (const [id, quantity] of Object.entries(invoice.creditedQuantities ?? {})) {
    const kept = stored[id];
    if (kept) {
      out.set(Number(id), { amount: centsOf(kept.amount), tax: centsOf(kept.tax) });
      continue;
    }
    // Credited before the totals were kept: what its quantity rounds to, within the line.
    const line = invoice.lineItems.find((l) => l.id === Number(id));
    if (!line) continue;
    const all = whole(line);
    const amount = capped(lineAmount(must(parseQuantity(quantity)), must(parseMoney(line.unitPrice))), all.amount);
    out.set(line.id, { amount, tax: capped(lineTax(amount, must(parseTaxRate(line.taxRate))), all.tax) });
  }
  return out;
}

/**
 * The part of `line` that crediting `quantity` of it takes, given what earlier parts took
 * (`before`) and whether this part credits the line's last quantity (`last`).
 */
export function linePart(line: LineItem, quantity: bigint, before: LinePart, last: boolean): LinePart {
  const all = whole(line);
  const left = { amount: all.amount - before.amount, tax: all.tax - before.tax };
  if (last) return left;
  const amount = capped(lineAmount(quantity, must(parseMoney(line.unitPrice))), left.amount);
  return { amount, tax: capped(lineTax(amount, must(parseTaxRate(line.taxRate))), left.tax) };
}

/** `creditedLineTotals` as stored on the invoice item. */
export const storedLineTotals = (parts: Map<number, LinePart>): Record<string, { amount: string; tax: string }> =>
  Object.fromEntries(
    [...parts].map(([id, part]) => [String(id), { amount: formatMoney(part.amount), tax: formatMoney(part.tax) }]),
  );
