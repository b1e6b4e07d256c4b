import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fromMinorUnits, toMinorUnits } from "@invoicing/core/payments/minor-units";

/** Cents (two decimals in every currency, API.md) ↔ the integer Stripe's API takes. */
describe("minor units", () => {
  it("are cents for two-decimal currencies, whole units for zero-decimal ones, thousandths for three-decimal ones", () => {
    expect(toMinorUnits(6492n, "USD")).toBe(6492n);
    expect(toMinorUnits(150000n, "JPY")).toBe(1500n);
    expect(toMinorUnits(150050n, "JPY")).toBeNull(); // ¥1500.50 cannot be charged: never rounded
    expect(toMinorUnits(1234n, "KWD")).toBe(12340n);
    expect(toMinorUnits(4000n, "ISK")).toBe(4000n);
    expect(toMinorUnits(4010n, "ISK")).toBeNull(); // Stripe takes whole krónur only
  });

  /** Amounts that can be charged in `currency`: whole units where Stripe takes only whole units. */
  const chargeable = (currency: string) =>
    ZERO_DECIMAL_OR_WHOLE.includes(currency)
      ? fc.bigInt({ min: 0n, max: 999_999_999_999n }).map((units) => units * 100n)
      : fc.bigInt({ min: 0n, max: 99_999_999_999_999n });
  const ZERO_DECIMAL_OR_WHOLE = ["JPY", "KRW", "CLP", "ISK"];
  const CURRENCIES = ["USD", "EUR", "BHD", "KWD", ...ZERO_DECIMAL_OR_WHOLE];

  it("come back to the same cents whenever they could be charged, in every currency", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...CURRENCIES).chain((currency) => fc.tuple(fc.constant(currency), chargeable(currency))),
        ([currency, cents]) => {
          const minor = toMinorUnits(cents, currency);
          expect(minor).not.toBeNull();
          expect(fromMinorUnits(minor!, currency)).toBe(cents);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("never charge a fraction of a whole unit where Stripe takes whole units only", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZERO_DECIMAL_OR_WHOLE),
        fc.bigInt({ min: 0n, max: 999_999_999_999n }),
        fc.bigInt({ min: 1n, max: 99n }),
        (currency, units, fraction) => {
          expect(toMinorUnits(units * 100n + fraction, currency)).toBeNull();
        },
      ),
    );
  });

  it("refuse Stripe amounts that hold a fraction of a cent", () => {
    expect(fromMinorUnits(12345n, "BHD")).toBeNull();
    expect(fromMinorUnits(1500n, "JPY")).toBe(150000n);
  });
});
