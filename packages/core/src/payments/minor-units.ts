/**
 * Cents ↔ Stripe's "minor units". Our amounts always have two decimals (whatever
 * the currency); Stripe wants an integer in the currency's smallest unit as Stripe defines it
 * (stripe.com/docs/currencies):
 * - zero-decimal currencies (JPY, KRW, …): whole units. JPY "1500.00" is sent as 1500. An amount with
 *   a fraction ("1500.50" JPY) cannot be charged exactly, so it is not charged at all: no checkout
 *   session is made (never silently rounded).
 * - three-decimal currencies (BHD, JOD, KWD, OMR, TND): thousandths, so cents × 10 (its last digit is
 *   then 0, as Stripe requires for them).
 * - ISK: two decimals in the API, but only whole krónur are accepted, so cents must be a multiple of 100.
 * - every other currency: cents as they are.
 * All bigint: the conversion is exact; only the adapter turns the result into a JSON number.
 */
const ZERO_DECIMAL = new Set([
  "BIF",
  "CLP",
  "DJF",
  "GNF",
  "JPY",
  "KMF",
  "KRW",
  "MGA",
  "PYG",
  "RWF",
  "UGX",
  "VND",
  "VUV",
  "XAF",
  "XOF",
  "XPF",
]);
const THREE_DECIMAL = new Set(["BHD", "JOD", "KWD", "OMR", "TND"]);
const WHOLE_UNITS_ONLY = new Set(["ISK"]);

/** The amount in Stripe's minor units, or null when it cannot be charged exactly in that currency. */
export function toMinorUnits(cents: bigint, currency: string): bigint | null {
  const code = currency.toUpperCase();
  if (ZERO_DECIMAL.has(code)) return cents % 100n === 0n ? cents / 100n : null;
  if (THREE_DECIMAL.has(code)) return cents * 10n;
  if (WHOLE_UNITS_ONLY.has(code)) return cents % 100n === 0n ? cents : null;
  return cents;
}

/** Stripe's minor units back to cents, or null when they hold a fraction of a cent. */
export function fromMinorUnits(minor: bigint, currency: string): bigint | null {
  const code = currency.toUpperCase();
  if (ZERO_DECIMAL.has(code)) return minor * 100n;
  if (THREE_DECIMAL.has(code)) return minor % 10n === 0n ? minor / 10n : null;
  return minor;
}
