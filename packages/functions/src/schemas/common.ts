import * as v from "valibot";
import {
  MAX_QUANTITY_HUNDREDTHS,
  MAX_UNIT_PRICE_CENTS,
  TAX_RATE_ONE,
  parseMoney,
  parseQuantity,
  parseTaxRate,
} from "@invoicing/core/money/money";
import type { ParseResult } from "@invoicing/core/money/decimal";
import { parseTimestamp } from "@invoicing/core/time";

/**
 * Building blocks of the request schemas. The same schemas validate requests and generate the
 * OpenAPI document, so every rule written here is documented there.
 */

/** A decimal given as a JSON string or number, checked exactly (no float arithmetic). */
function decimal(parse: (x: unknown) => ParseResult, inRange: (value: bigint) => boolean, rangeText: string, example: string) {
  return v.pipe(
    v.union([v.string(), v.number()], "must be a decimal number or a string holding one"),
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      const parsed = parse(dataset.value);
      if (!parsed.ok) addIssue({ message: parsed.reason });
      else if (!inRange(parsed.value)) addIssue({ message: rangeText });
    }),
    v.metadata({ examples: [example] }),
  );
}

export const quantity = decimal(parseQuantity, (q) => q > 0n && q <= MAX_QUANTITY_HUNDREDTHS, "must be > 0 and ≤ 1000000", "2.5");
export const unitPrice = decimal(parseMoney, (p) => p <= MAX_UNIT_PRICE_CENTS && p >= -MAX_UNIT_PRICE_CENTS, "must be between -999999999.99 and 999999999.99", "19.99");
/** A payment or refund amount: > 0, two decimals at most. */
export const positiveAmount = decimal(parseMoney, (a) => a > 0n && a <= MAX_UNIT_PRICE_CENTS, "must be > 0 and ≤ 999999999.99", "250.00");
export const taxRate = decimal(parseTaxRate, (r) => r >= 0n && r <= TAX_RATE_ONE, "must be between 0 and 1", "0.0825");

export const lineItemInput = v.strictObject({
  description: v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(1000)),
  quantity: v.optional(quantity),
  unitPrice,
  taxRate: v.optional(taxRate),
});

export const lineItems = v.pipe(v.array(lineItemInput), v.maxLength(100, "at most 100 line items"));

/** RFC 3339 date-time or YYYY-MM-DD, normalised to ISO 8601 UTC with milliseconds. */
export const timestamp = v.pipe(
  v.string(),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const parsed = parseTimestamp(dataset.value);
    if (parsed === null) {
      addIssue({ message: "must be an RFC 3339 date-time (2026-11-22T09:30:00Z) or a date (2026-11-22)" });
      return NEVER;
    }
    return parsed;
  }),
);

const KNOWN_CURRENCIES = new Set(Intl.supportedValuesOf("currency"));
export const currency = v.pipe(
  v.string(),
  v.check((code) => /^[A-Z]{3}$/.test(code) && KNOWN_CURRENCIES.has(code), "must be an uppercase ISO 4217 currency code"),
);

export const email = v.pipe(
  v.string(),
  v.maxLength(254),
  v.regex(/^[^\s@]+@[^\s@]+$/, "must be an email address local@domain"),
);

export const notes = v.pipe(v.string(), v.maxLength(5000));

export const httpsUrl = v.pipe(
  v.string(),
  v.maxLength(2048),
  v.check((value) => {
    try {
      return new URL(value).protocol === "https:";
    } catch {
      return false;
    }
  }, "must be an https URL"),
);

/** Positive integer ids in paths and bodies. */
export const id = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(Number.MAX_SAFE_INTEGER));
export const pathId = v.pipe(
  v.string(),
  v.regex(/^[1-9]\d{0,15}$/, "must be a positive integer"),
  v.transform(Number),
  v.check((n) => Number.isSafeInteger(n), "must be a positive integer"),
);

/** Pagination. Query values are strings. */
const intParam = (min: number, max: number) =>
  v.pipe(v.string(), v.regex(/^\d{1,9}$/, "must be an integer"), v.transform(Number), v.minValue(min), v.maxValue(max));
export const pagination = {
  limit: v.optional(intParam(1, 200), "100"),
  offset: v.optional(intParam(0, 999_999_999), "0"),
  cursor: v.optional(v.string()),
};

/** Action endpoints take an empty body (or `{}`); any field in it is unknown. */
export const emptyBody = v.strictObject({});
