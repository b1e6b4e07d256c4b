/**
 * Exact fixed-point decimals as bigint in a given scale (10^scale units).
 * Amounts are cents (scale 2), quantities hundredths (scale 2), tax rates millionths (scale 6).
 * No `number` arithmetic on values: parsing goes through strings only.
 */

const DECIMAL = /^(-)?(\d+)(?:\.(\d+))?$/;

export type ParseResult = { ok: true; value: bigint } | { ok: false; reason: string };

/**
 * Parses a JSON string or number into a scaled bigint, refusing more decimals than `scale`.
 * `maxWholeDigits` bounds the integer part of untrusted input (every limit of the API is far below
 * 10^15); values the service computed itself (an invoice total) are read back without that bound.
 */
export function parseScaled(input: unknown, scale: number, maxWholeDigits = 15): ParseResult {
  let text: string;
  if (typeof input === "string") text = input.trim();
  else if (typeof input === "number" && Number.isFinite(input)) {
    // String() gives the shortest spelling that reads back as the same double: the JSON literal as
    // written for every value with up to 15 significant digits (all the API's limits), "19.99" stays
    // "19.99". Exponents appear only far outside the limits: below 1e-6 (too many decimals) and from
    // 1e21 (too large).
    text = String(input);
    if (/e-/i.test(text)) return { ok: false, reason: `at most ${scale} decimal places are allowed` };
    if (/e\+/i.test(text)) return { ok: false, reason: "is too large" };
  } else return { ok: false, reason: "must be a decimal number or a string holding one" };
  const m = DECIMAL.exec(text);
  if (!m) return { ok: false, reason: `"${truncate(text)}" is not a decimal number` };
  const [, sign, rawWhole, frac = ""] = m;
  if (frac.length > scale) return { ok: false, reason: `at most ${scale} decimal places are allowed` };
  const whole = rawWhole!.replace(/^0+(?=\d)/, "");
  if (whole.length > maxWholeDigits) return { ok: false, reason: "is too large" };
  const digits = BigInt(whole + frac.padEnd(scale, "0"));
  return { ok: true, value: sign ? -digits : digits };
}

function truncate(s: string): string {
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}

/** n / d rounded to the nearest integer, halves away from zero (d > 0). */
export function divRoundHalfAwayFromZero(n: bigint, d: bigint): bigint {
  const negative = n < 0n;
  const abs = negative ? -n : n;
  let q = abs / d;
  if ((abs % d) * 2n >= d) q += 1n;
  return negative ? -q : q;
}

/** Formats a scaled bigint with exactly `scale` decimals ("-12.50"). */
export function formatScaled(value: bigint, scale: number): string {
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(scale + 1, "0");
  const whole = digits.slice(0, digits.length - scale);
  const frac = digits.slice(digits.length - scale);
  return `${negative ? "-" : ""}${whole}${scale > 0 ? "." + frac : ""}`;
}
