import fc from "fast-check";

/**
 * A reference for the money laws that shares no code with src/money: values are rebuilt from the
 * digits of their decimal strings, and rounding looks at the first dropped digit instead of using
 * remainders. Test helper only (not a test file).
 */

/** The value of a decimal string in units of 10^-scale, from its digits ("-1.5", 2 → -150n). */
export function scaledDigits(text: string, scale: number): bigint {
  const negative = text.startsWith("-");
  const [whole, frac = ""] = (negative ? text.slice(1) : text).split(".");
  if (frac.length > scale) throw new Error(`${text} has more than ${scale} decimals`);
  const digits = BigInt(`${whole}${frac.padEnd(scale, "0")}`);
  return negative ? -digits : digits;
}

/** The exact product of two decimals with up to two decimals each, in units of 10^-4. */
export const exactScaled = (a: string, b: string): bigint => scaledDigits(a, 2) * scaledDigits(b, 2);

/**
 * Rounds `value` (in units of 10^-from) to units of 10^-to, halves away from zero, by digits:
 * drop the last (from - to) digits of |value| and add one when the first dropped digit is ≥ 5.
 */
export function referenceRound(value: bigint, from: number, to: number): bigint {
  const drop = from - to;
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(drop + 1, "0");
  const kept = BigInt(digits.slice(0, digits.length - drop));
  const firstDropped = digits[digits.length - drop]!;
  const rounded = firstDropped >= "5" ? kept + 1n : kept;
  return negative ? -rounded : rounded;
}

/**
 * Decimal strings as a client writes them: optional minus, an integer part up to `maxWhole`, and 0 to
 * `maxDecimals` decimals (so "7", "7.5" and "7.50" all occur). `positive` keeps only values > 0.
 */
export function decimalString(options: {
  maxWhole: bigint;
  maxDecimals: number;
  positive?: boolean;
}): fc.Arbitrary<string> {
  const digits = new RegExp(`^\\d{0,${options.maxDecimals}}$`);
  return fc
    .tuple(
      options.positive ? fc.constant(false) : fc.boolean(),
      fc.bigInt({ min: 0n, max: options.maxWhole }),
      fc.stringMatching(digits),
    )
    .map(([negative, whole, frac]) => `${negative ? "-" : ""}${whole}${frac ? `.${frac}` : ""}`)
    .filter((text) => !options.positive || /[1-9]/.test(text));
}
