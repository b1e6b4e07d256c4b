import { divRoundHalfAwayFromZero, formatScaled, parseScaled, type ParseResult } from "./decimal";

/** Money is bigint cents; quantities bigint hundredths; tax rates bigint millionths. */
type Cents = bigint;

const MONEY_SCALE = 2;
const QUANTITY_SCALE = 2;
const TAX_RATE_SCALE = 6;

export const MAX_UNIT_PRICE_CENTS = 99_999_999_999n; // 999999999.99
export const MAX_QUANTITY_HUNDREDTHS = 100_000_000n; // 1000000.00
export const TAX_RATE_ONE = 1_000_000n;

export const parseMoney = (input: unknown): ParseResult => parseScaled(input, MONEY_SCALE);
export const parseQuantity = (input: unknown): ParseResult => parseScaled(input, QUANTITY_SCALE);
export const parseTaxRate = (input: unknown): ParseResult => parseScaled(input, TAX_RATE_SCALE);

export const formatMoney = (cents: Cents): string => formatScaled(cents === 0n ? 0n : cents, MONEY_SCALE);
export const formatQuantity = (hundredths: bigint): string => formatScaled(hundredths, QUANTITY_SCALE);

/** "0.10", "0.0825", "0.09975": 2 to 6 decimals, trailing zeros beyond the second dropped. */
export function formatTaxRate(millionths: bigint): string {
  return formatScaled(millionths, TAX_RATE_SCALE).replace(/(\.\d\d\d*?)0+$/, "$1");
}

/** round(quantity × unitPrice) to cents, half away from zero. */
export const lineAmount = (quantityHundredths: bigint, unitPriceCents: Cents): Cents =>
  divRoundHalfAwayFromZero(quantityHundredths * unitPriceCents, 100n);

/** round(amount × taxRate) to cents, half away from zero. */
export const lineTax = (amount: Cents, taxRateMillionths: bigint): Cents =>
  divRoundHalfAwayFromZero(amount * taxRateMillionths, TAX_RATE_ONE);

/**
 * Reads back a stored, already formatted amount ("12.50") as cents. Totals may exceed the input
 * limits (100 lines of 1000000 × 999999999.99 at a 100 % tax rate is 2 × 10^17), so no size bound.
 */
export function centsOf(stored: string): Cents {
  const parsed = parseScaled(stored, MONEY_SCALE, Number.POSITIVE_INFINITY);
  if (!parsed.ok) throw new Error(`corrupt stored amount: ${stored}`);
  return parsed.value;
}
