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
import { TAX_CATEGORIES, taxCategoryProblem } from "@invoicing/core/documents/line-items";

/**
 * Building blocks of the request schemas. The same schemas validate requests and generate the
 * OpenAPI document, so every rule written here is documented there.
 */

/** A decimal given as a JSON string or number, checked exactly (no float arithmetic). */
function decimal(
  parse: (x: unknown) => ParseResult,
  inRange: (value: bigint) => boolean,
  rangeText: string,
  example: string,
) {
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

export const quantity = decimal(
  parseQuantity,
  (q) => q > 0n && q <= MAX_QUANTITY_HUNDREDTHS,
  "must be > 0 and ≤ 1000000",
  "2.5",
);
export const unitPrice = decimal(
  parseMoney,
  (p) => p <= MAX_UNIT_PRICE_CENTS && p >= -MAX_UNIT_PRICE_CENTS,
  "must be between -999999999.99 and 999999999.99",
  "19.99",
);
/** A payment or refund amount: > 0, two decimals at most. */
export const positiveAmount = decimal(
  parseMoney,
  (a) => a > 0n && a <= MAX_UNIT_PRICE_CENTS,
  "must be > 0 and ≤ 999999999.99",
  "250.00",
);
export const taxRate = decimal(parseTaxRate, (r) => r >= 0n && r <= TAX_RATE_ONE, "must be between 0 and 1", "0.0825");

export const taxCategory = v.picklist(TAX_CATEGORIES, `must be one of ${TAX_CATEGORIES.join(", ")}`);

/**
 * A line; its category and rate must agree (standard charges tax, every other category none),
 * reported on the line's `taxCategory`. An absent category follows the rate.
 */
export const lineItemInput = v.pipe(
  v.strictObject({
    description: v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(1000)),
    quantity: v.optional(quantity),
    unitPrice,
    taxRate: v.optional(taxRate),
    taxCategory: v.optional(taxCategory),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed || dataset.value.taxCategory === undefined) return;
    const rate = parseTaxRate(dataset.value.taxRate ?? "0");
    const problem = rate.ok ? taxCategoryProblem(dataset.value.taxCategory, rate.value) : null;
    if (problem) {
      addIssue({
        message: problem,
        path: [
          {
            type: "object",
            origin: "value",
            input: dataset.value,
            key: "taxCategory",
            value: dataset.value.taxCategory,
          },
        ],
      });
    }
  }),
);

export const MAX_LINE_ITEMS = 100;

/**
 * The length is checked BEFORE the items: a 255 KB body of 85,000 `{}` would otherwise be validated
 * item by item into 170,000 errors (a 10 MB answer to a small request). A schema later in a pipe
 * runs only when the actions before it passed, so an over-long array is one error on the array.
 * (Its JSON Schema is written by hand in openapi/json-schema.ts: valibot documents a pipe of two
 * schemas by its first.)
 */
export const lineItems = v.pipe(
  v.array(v.unknown()),
  v.maxLength(MAX_LINE_ITEMS, `at most ${MAX_LINE_ITEMS} line items`),
  v.array(lineItemInput),
);

/** A schedule's template: the same, with at least one line. */
export const templateLineItems = v.pipe(
  v.array(v.unknown()),
  v.minLength(1, "needs at least one line item"),
  v.maxLength(MAX_LINE_ITEMS, `at most ${MAX_LINE_ITEMS} line items`),
  v.array(lineItemInput),
);

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

/** A calendar date `YYYY-MM-DD` that exists (the date of supply). */
export const dateOnly = v.pipe(
  v.string(),
  v.check((value) => {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
    const date = new Date(`${value}T00:00:00Z`);
    return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value);
  }, "must be a date YYYY-MM-DD"),
);

/** Free text of at most `max` characters, null to clear. */
export const optionalText = (max: number) =>
  v.optional(v.nullable(v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(max))));

const KNOWN_CURRENCIES = new Set(Intl.supportedValuesOf("currency"));
export const currency = v.pipe(
  v.string(),
  v.check(
    (code) => /^[A-Z]{3}$/.test(code) && KNOWN_CURRENCIES.has(code),
    "must be an uppercase ISO 4217 currency code",
  ),
);

/** A control character, U+0000–U+001F or U+007F: never part of an email address or a URL. */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/**
 * Every email input (a client's, the profile's, a send's `to`): local@domain, at most 254 chars, and
 * no control character (U+0000–U+001F, U+007F) anywhere, which would reach a `To:` header raw.
 */
export const email = v.pipe(
  v.string(),
  v.maxLength(254),
  v.check((value) => !CONTROL_CHARACTER.test(value), "must not contain control characters (U+0000–U+001F, U+007F)"),
  v.regex(/^[^\s@]+@[^\s@]+$/, "must be an email address local@domain"),
);

export const notes = v.pipe(v.string(), v.maxLength(5000));

const isHttpsUrl = (value: string): boolean => URL.canParse(value) && new URL(value).protocol === "https:";

/**
 * An https URL kept exactly as given: one that is only shown (the profile's website, printed as the
 * user wrote it: `https://shop.example` must not come back as `https://shop.example/`). Control
 * characters are refused outright rather than left to the URL parser, which silently drops tabs and
 * newlines.
 */
export const httpsUrlAsGiven = v.pipe(
  v.string(),
  v.maxLength(2048),
  v.check((value) => !CONTROL_CHARACTER.test(value), "must not contain control characters"),
  v.check(isHttpsUrl, "must be an https URL"),
);

/**
 * An https URL that is followed (a payment link: a redirect's `Location`, a page's `href`), stored as
 * its normalized `href`, the form every later reader gets (a raw non-ASCII one would break a header).
 */
export const httpsUrl = v.pipe(
  httpsUrlAsGiven,
  v.transform((value) => new URL(value).href),
);

/** Positive integer ids in paths and bodies. */
export const id = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(Number.MAX_SAFE_INTEGER));
export const pathId = v.pipe(
  v.string(),
  v.regex(/^[1-9]\d{0,15}$/, "must be a positive integer"),
  v.transform(Number),
  v.check((n) => Number.isSafeInteger(n), "must be a positive integer"),
);

/**
 * Pagination. Query values are strings. `offset` stops at MAX_OFFSET: a deeper offset makes the
 * server read and skip that many records per call; deeper pages are reached through the `Link`
 * header, whose cursor makes any depth cost one page.
 */
export const MAX_OFFSET = 10_000;
const intParam = (min: number, max: number) =>
  v.pipe(v.string(), v.regex(/^\d{1,9}$/, "must be an integer"), v.transform(Number), v.minValue(min), v.maxValue(max));
export const pagination = {
  limit: v.optional(intParam(1, 200), "100"),
  offset: v.optional(intParam(0, MAX_OFFSET), "0"),
  cursor: v.optional(v.string()),
};

/** Action endpoints take an empty body (or `{}`); any field in it is unknown. */
export const emptyBody = v.strictObject({});
