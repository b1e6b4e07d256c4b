import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { divRoundHalfAwayFromZero, formatScaled } from "../src/money/decimal";
import {
  MAX_QUANTITY_HUNDREDTHS,
  MAX_UNIT_PRICE_CENTS,
  centsOf,
  formatMoney,
  formatQuantity,
  formatTaxRate,
  lineAmount,
  lineTax,
  parseMoney,
  parseQuantity,
  parseTaxRate,
} from "../src/money/money";
import { decimalString, exactScaled, referenceRound, scaledDigits } from "./money-reference";

/**
 * The money laws of the API (exact decimals, half away from zero), checked against a reference that shares no code with the
 * implementation: amounts are rebuilt from the decimal strings' digits and rounded by looking at
 * the first dropped digit (money-reference.ts).
 */

describe("parse and format", () => {
  it("parse(format(x)) = x for any amount in cents", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 17n) + 1n, max: 10n ** 17n - 1n }), (cents) => {
        const text = formatMoney(cents);
        expect(text).toMatch(/^-?\d+\.\d\d$/);
        const parsed = parseMoney(text);
        expect(parsed).toEqual({ ok: true, value: cents });
      }),
    );
  });

  it("format(parse(s)) is s written with exactly two decimals", () => {
    fc.assert(
      fc.property(decimalString({ maxWhole: 999_999_999_999n, maxDecimals: 2 }), (s) => {
        const parsed = parseMoney(s);
        if (!parsed.ok) throw new Error(`${s}: ${parsed.reason}`);
        // Reference: the digits padded to two decimals, leading zeros dropped, no "-0.00".
        const digits = scaledDigits(s, 2);
        expect(formatMoney(parsed.value)).toBe(formatScaled(digits, 2));
        expect(parsed.value).toBe(digits);
      }),
    );
  });

  it("centsOf reads back any stored amount, however large a total grows", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), (cents) => {
        expect(centsOf(formatMoney(cents))).toBe(cents);
      }),
    );
    // The largest invoice the limits allow: 100 lines of 1000000 × 999999999.99 at a 100 % tax rate.
    expect(centsOf("199999999998000000.00")).toBe(19_999_999_999_800_000_000n);
    expect(() => centsOf("12.5x")).toThrow();
  });

  it("formats fixed examples", () => {
    expect(formatMoney(0n)).toBe("0.00");
    expect(formatMoney(5n)).toBe("0.05");
    expect(formatMoney(-5n)).toBe("-0.05");
    expect(formatMoney(-123450n)).toBe("-1234.50");
    expect(formatMoney(99_999_999_999n)).toBe("999999999.99");
    expect(formatQuantity(250n)).toBe("2.50");
    expect(formatScaled(7n, 0)).toBe("7");
  });

  it("parses strings and JSON numbers alike", () => {
    expect(parseMoney("19.99")).toEqual({ ok: true, value: 1999n });
    expect(parseMoney(19.99)).toEqual({ ok: true, value: 1999n });
    expect(parseMoney("-0.5")).toEqual({ ok: true, value: -50n });
    expect(parseMoney("7")).toEqual({ ok: true, value: 700n });
    expect(parseMoney(7)).toEqual({ ok: true, value: 700n });
    expect(parseMoney("-0.00")).toEqual({ ok: true, value: 0n });
    expect(parseMoney("000012.30")).toEqual({ ok: true, value: 1230n });
    expect(parseTaxRate(0.09975)).toEqual({ ok: true, value: 99_750n });
    expect(parseTaxRate("1")).toEqual({ ok: true, value: 1_000_000n });
  });

  it("a number and the string of its JSON literal always agree", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(
          { parse: parseMoney, max: 999_999_999n, decimals: 2 },
          { parse: parseQuantity, max: 1_000_000n, decimals: 2 },
          { parse: parseTaxRate, max: 1n, decimals: 6 },
        ),
        fc.boolean(),
        fc.nat(),
        fc.stringMatching(/^\d{0,6}$/),
        ({ parse, max, decimals }, negative, wholeSeed, fracSeed) => {
          const whole = BigInt(wholeSeed) % (max + 1n);
          const frac = fracSeed.slice(0, decimals);
          const literal = `${negative ? "-" : ""}${whole}${frac ? `.${frac}` : ""}`;
          const fromNumber = parse((JSON.parse(`{"v":${literal}}`) as { v: number }).v);
          const fromString = parse(literal);
          expect(fromNumber).toEqual(fromString);
          expect(fromString.ok).toBe(true);
        },
      ),
    );
  });

  it("refuses more decimals than allowed (400, never silent rounding), as a string or a number", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(
          { parse: parseMoney, scale: 2 },
          { parse: parseQuantity, scale: 2 },
          { parse: parseTaxRate, scale: 6 },
        ),
        fc.bigInt({ min: 0n, max: 999_999n }),
        fc.stringMatching(/^\d{1,8}$/),
        fc.integer({ min: 1, max: 9 }),
        ({ parse, scale }, whole, fracSeed, lastDigit) => {
          // A fraction one or more digits longer than the scale, its last digit not zero.
          const frac = `${fracSeed.padEnd(scale, "0")}${lastDigit}`;
          const literal = `${whole}.${frac}`;
          const asString = parse(literal);
          expect(asString.ok).toBe(false);
          if (!asString.ok) expect(asString.reason).toMatch(/decimal places/);
          expect(parse(`-${literal}`).ok).toBe(false);
          expect(parse(Number(literal)).ok).toBe(false);
        },
      ),
    );
    // Trailing zeros count too: "1.000" has three decimals.
    expect(parseMoney("1.000").ok).toBe(false);
    expect(parseTaxRate("0.1234567").ok).toBe(false);
    expect(parseTaxRate(0.0000001).ok).toBe(false);
  });

  it("refuses what is not a plain decimal", () => {
    for (const bad of [
      "",
      " ",
      "abc",
      "1,00",
      "1e2",
      "+1",
      ".5",
      "5.",
      "1.2.3",
      "--1",
      "0x10",
      "Infinity",
      "NaN",
      "١٢",
    ]) {
      expect(parseMoney(bad).ok, JSON.stringify(bad)).toBe(false);
    }
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, 1e21, true, null, undefined, {}, [], 10n]) {
      expect(parseMoney(bad).ok, String(bad)).toBe(false);
    }
    expect(parseMoney("1234567890123456").ok).toBe(false); // 16 integer digits: far beyond any limit
    expect(parseMoney("0000000000000000001.00")).toEqual({ ok: true, value: 100n }); // leading zeros are not size
  });

  it("taxRate is written with 2 to 6 decimals, trailing zeros beyond the second dropped", () => {
    expect(formatTaxRate(100_000n)).toBe("0.10");
    expect(formatTaxRate(82_500n)).toBe("0.0825");
    expect(formatTaxRate(99_750n)).toBe("0.09975");
    expect(formatTaxRate(0n)).toBe("0.00");
    expect(formatTaxRate(1_000_000n)).toBe("1.00");
    expect(formatTaxRate(1n)).toBe("0.000001");
    expect(formatTaxRate(123_456n)).toBe("0.123456");
    expect(formatTaxRate(50_000n)).toBe("0.05");
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 1_000_000n }), (millionths) => {
        const text = formatTaxRate(millionths);
        expect(text).toMatch(/^[01]\.\d\d(\d{0,4}[1-9])?$/);
        expect(parseTaxRate(text)).toEqual({ ok: true, value: millionths });
      }),
    );
  });
});

describe("rounding: half away from zero, to the cent", () => {
  it("divRoundHalfAwayFromZero obeys the rounding law for every numerator", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }),
        fc.constantFrom(2n, 10n, 100n, 1_000_000n, 7n),
        (n, d) => {
          const q = divRoundHalfAwayFromZero(n, d);
          const error = n - q * d; // what rounding dropped or added
          const twice = (error < 0n ? -error : error) * 2n;
          expect(twice <= d).toBe(true); // nearest
          if (twice === d) expect((q < 0n ? -q : q) * d > (n < 0n ? -n : n)).toBe(true); // a tie goes away from zero
          if (q !== 0n) expect(q < 0n).toBe(n < 0n); // sign kept
        },
      ),
    );
  });

  it("line amount = round(quantity × unitPrice) matches the digit-based reference", () => {
    fc.assert(
      fc.property(
        decimalString({ maxWhole: 1_000_000n, maxDecimals: 2, positive: true }),
        decimalString({ maxWhole: 999_999_999n, maxDecimals: 2 }),
        (quantity, unitPrice) => {
          const q = parseQuantity(quantity);
          const p = parseMoney(unitPrice);
          if (!q.ok || !p.ok) throw new Error("generator made an invalid input");
          expect(lineAmount(q.value, p.value)).toBe(referenceRound(exactScaled(quantity, unitPrice), 4, 2));
        },
      ),
    );
  });

  it("line tax = round(amount × taxRate) matches the digit-based reference", () => {
    fc.assert(
      fc.property(
        decimalString({ maxWhole: 10n ** 15n - 1n, maxDecimals: 2 }),
        decimalString({ maxWhole: 0n, maxDecimals: 6, positive: true }),
        (amount, rate) => {
          const a = scaledDigits(amount, 2);
          const r = parseTaxRate(rate);
          if (!r.ok) throw new Error("generator made an invalid rate");
          // amount has 2 decimals and the rate up to 6: the exact product has 2 + 6.
          const exact = scaledDigits(amount, 2) * scaledDigits(rate, 6);
          expect(lineTax(a, r.value)).toBe(referenceRound(exact, 8, 2));
        },
      ),
    );
  });

  it("rounds the cases binary floating point gets wrong", () => {
    // 1.5 × 0.05 = 0.075 exactly; as a double 0.075 is 0.07499999…, so float rounding gives 0.07.
    expect(formatMoney(lineAmount(150n, 5n))).toBe("0.08");
    expect(formatMoney(lineAmount(150n, -5n))).toBe("-0.08"); // away from zero, not toward +∞
    expect(formatMoney(lineAmount(250n, 1n))).toBe("0.03"); // 0.025
    expect(formatMoney(lineTax(10n, 50_000n))).toBe("0.01"); // 0.10 × 0.05 = 0.005
    expect(formatMoney(lineTax(-10n, 50_000n))).toBe("-0.01");
    expect(formatMoney(lineTax(1005n, 50_000n))).toBe("0.50"); // 0.5025
    expect(formatMoney(lineTax(5997n, 82_500n))).toBe("4.95"); // API.md: 4.947525
    expect(formatMoney(lineAmount(300n, 1999n))).toBe("59.97");
  });

  it("stays exact far beyond 2^53 (no float anywhere)", () => {
    const amount = lineAmount(MAX_QUANTITY_HUNDREDTHS, MAX_UNIT_PRICE_CENTS);
    expect(formatMoney(amount)).toBe("999999999990000.00");
    expect(amount > BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
    const tax = lineTax(amount, 999_999n);
    expect(formatMoney(tax)).toBe(formatScaled(referenceRound(amount * 999_999n, 8, 2), 2));
    expect(formatMoney(tax)).toBe("999998999990000.01"); // Python's decimal module, ROUND_HALF_UP
  });

  it("the money sources use no floating point arithmetic", () => {
    const sources = ["../src/money/decimal.ts", "../src/money/money.ts", "../src/documents/line-items.ts"].map((path) =>
      readFileSync(fileURLToPath(new URL(path, import.meta.url)), "utf8"),
    );
    for (const source of sources) {
      expect(source).not.toMatch(/parseFloat|toFixed|toPrecision|Math\.(round|floor|ceil|trunc|pow)|Number\(/);
    }
  });
});
