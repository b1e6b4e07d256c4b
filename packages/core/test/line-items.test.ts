import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  buildLineItems,
  computeTotals,
  copyLineItems,
  nextLineId,
  type LineItemInput,
} from "../src/documents/line-items";
import { formatScaled } from "../src/money/decimal";
import { WIDGET, WIDGET_TOTALS, widgetLine } from "../../../test/support/line-items";
import { decimalString, exactScaled, referenceRound, scaledDigits } from "./money-reference";

/** Line items and totals (amount, lineTax, subtotal, taxTotal, total). */

/** Line inputs within the API's limits (quantity ≤ 1000000 is covered at its edge below). */
const lineInput = fc.record({
  description: fc.string({ minLength: 1, maxLength: 20 }),
  quantity: decimalString({ maxWhole: 999_999n, maxDecimals: 2, positive: true }),
  unitPrice: decimalString({ maxWhole: 999_999_999n, maxDecimals: 2 }),
  taxRate: decimalString({ maxWhole: 0n, maxDecimals: 6 }).map((rate) => rate.replace("-", "")),
});

describe("buildLineItems", () => {
  it("computes the API.md example: 3 × 19.99 at 0.0825", () => {
    const lines = buildLineItems([WIDGET], 1);
    expect(lines).toEqual([widgetLine()]);
    expect(computeTotals(lines)).toEqual(WIDGET_TOTALS);
  });

  it("numbers ids from firstId and sortOrder from 0, with defaults quantity 1 and taxRate 0", () => {
    const lines = buildLineItems(
      [
        { description: "a", unitPrice: 10 },
        { description: "b", quantity: 2.5, unitPrice: "0.10", taxRate: 0.1 },
        { description: "c", quantity: "1", unitPrice: -3, taxRate: "0.09975" },
      ],
      7,
    );
    expect(lines.map((l) => [l.id, l.sortOrder])).toEqual([
      [7, 0],
      [8, 1],
      [9, 2],
    ]);
    expect(lines[0]).toMatchObject({ quantity: "1.00", unitPrice: "10.00", taxRate: "0.00", amount: "10.00" });
    expect(lines[1]).toMatchObject({ quantity: "2.50", unitPrice: "0.10", taxRate: "0.10", amount: "0.25" });
    expect(lines[2]).toMatchObject({ quantity: "1.00", unitPrice: "-3.00", taxRate: "0.09975", amount: "-3.00" });
  });

  it("string and number inputs give the same lines", () => {
    fc.assert(
      fc.property(lineInput, (input) => {
        const asNumbers: LineItemInput = {
          description: input.description,
          quantity: Number(input.quantity),
          unitPrice: Number(input.unitPrice),
          taxRate: Number(input.taxRate),
        };
        expect(buildLineItems([asNumbers], 1)).toEqual(buildLineItems([input], 1));
      }),
    );
  });

  it("each amount is round(quantity × unitPrice) and every number a canonical decimal string", () => {
    fc.assert(
      fc.property(lineInput, (input) => {
        const [line] = buildLineItems([input], 1);
        expect(line!.amount).toBe(formatScaled(referenceRound(exactScaled(input.quantity, input.unitPrice), 4, 2), 2));
        expect(line!.quantity).toBe(formatScaled(scaledDigits(input.quantity, 2), 2));
        expect(line!.unitPrice).toBe(formatScaled(scaledDigits(input.unitPrice, 2), 2));
        expect(line!.taxRate).toMatch(/^[01]\.\d\d(\d{0,4}[1-9])?$/);
        expect(scaledDigits(line!.taxRate, 6)).toBe(scaledDigits(input.taxRate, 6));
      }),
    );
  });
});

describe("computeTotals", () => {
  it("subtotal = Σ amount, taxTotal = Σ round(amount × taxRate), total = subtotal + taxTotal", () => {
    fc.assert(
      fc.property(fc.array(lineInput, { maxLength: 100 }), (inputs) => {
        const lines = buildLineItems(inputs, 1);
        let subtotal = 0n;
        let taxTotal = 0n;
        for (const line of lines) {
          const amount = scaledDigits(line.amount, 2);
          subtotal += amount;
          taxTotal += referenceRound(amount * scaledDigits(line.taxRate, 6), 8, 2);
        }
        const totals = computeTotals(lines);
        expect(totals).toEqual({
          subtotal: formatScaled(subtotal, 2),
          taxTotal: formatScaled(taxTotal, 2),
          total: formatScaled(subtotal + taxTotal, 2),
        });
        // The law holds on the results as written, too.
        expect(scaledDigits(totals.total, 2)).toBe(scaledDigits(totals.subtotal, 2) + scaledDigits(totals.taxTotal, 2));
      }),
      { numRuns: 200 },
    );
  });

  it("rounds tax per line, not on the sum", () => {
    // Three lines of 0.10 at 5 %: each tax 0.005 → 0.01, so 0.03 (a tax on the 0.30 sum would be 0.02).
    const lines = buildLineItems(
      Array.from({ length: 3 }, () => ({ description: "x", unitPrice: "0.10", taxRate: "0.05" })),
      1,
    );
    expect(computeTotals(lines)).toEqual({ subtotal: "0.30", taxTotal: "0.03", total: "0.33" });
  });

  it("is exact at the largest invoice the limits allow", () => {
    const lines = buildLineItems(
      Array.from({ length: 100 }, () => ({
        description: "max",
        quantity: "1000000",
        unitPrice: "999999999.99",
        taxRate: "1",
      })),
      1,
    );
    expect(computeTotals(lines)).toEqual({
      subtotal: "99999999999000000.00",
      taxTotal: "99999999999000000.00",
      total: "199999999998000000.00",
    });
  });

  it("of no lines is zero", () => {
    expect(computeTotals([])).toEqual({ subtotal: "0.00", taxTotal: "0.00", total: "0.00" });
  });
});

describe("line ids", () => {
  it("nextLineId is above every id the lines have, and never below the previous next", () => {
    const lines = buildLineItems(
      [
        { description: "a", unitPrice: 1 },
        { description: "b", unitPrice: 1 },
      ],
      4,
    );
    expect(nextLineId(lines)).toBe(6);
    expect(nextLineId(lines, 9)).toBe(9);
    expect(nextLineId([])).toBe(1);
  });

  it("copyLineItems renumbers from firstId and keeps every amount", () => {
    const lines = buildLineItems(
      [
        { description: "a", unitPrice: "1.50", quantity: "2" },
        { description: "b", unitPrice: "-1" },
      ],
      5,
    );
    const copy = copyLineItems(lines);
    expect(copy.map((l) => [l.id, l.sortOrder])).toEqual([
      [1, 0],
      [2, 1],
    ]);
    expect(copy.map(({ id: _id, ...rest }) => rest)).toEqual(lines.map(({ id: _id, ...rest }) => rest));
    expect(copyLineItems(lines, 10).map((l) => l.id)).toEqual([10, 11]);
    expect(lines.map((l) => l.id)).toEqual([5, 6]); // the source is untouched
  });
});
