import * as v from "valibot";
import { timestamp } from "./common";

const month = v.pipe(v.string(), v.regex(/^\d{4}-(0[1-9]|1[0-2])$/, "must be a month YYYY-MM (UTC), e.g. 2026-11"));

/** GET /reports/revenue and /reports/tax: months `from`…`to`, JSON or CSV. */
export const monthlyReportQuery = {
  from: v.optional(v.pipe(month, v.description("First month, YYYY-MM (UTC); default: 11 months before `to`"))),
  to: v.optional(
    v.pipe(
      month,
      v.description("Last month, YYYY-MM (UTC), at most 36 months after `from`; default: the current month"),
    ),
  ),
  format: v.optional(v.picklist(["json", "csv"], "must be json or csv"), "json"),
};

/** GET /reports/aging: the time the ages are taken at. */
export const agingQuery = {
  asOf: v.optional(v.pipe(timestamp, v.description("RFC 3339 date-time or YYYY-MM-DD; default: now"))),
};
