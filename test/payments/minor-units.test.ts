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

  it("come back to the same cents whenever they could be charged", () => {
    const currencies = ["USD", "EUR", "JPY", "KRW", "BHD", "ISK", "CLP"];
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 99_999_999_999_999n }),
        fc.constantFrom(...currencies),
        (cents, currency) => {
          const minor = toMinorUnits(cents, currency);
          if (minor === null) return;
          expect(fromMinorUnits(minor, currency)).toBe(cents);
        },
      ),
    );
  });

  it("refuse Stripe amounts that hold a fraction of a cent", () => {
    expect(fromMinorUnits(12345n, "BHD")).toBeNull();
    expect(fromMinorUnits(1500n, "JPY")).toBe(150000n);
  });
});
