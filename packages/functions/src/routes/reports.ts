import { Hono, type Context } from "hono";
import { agingReport, monthsOf, revenueReport, taxReport } from "@invoicing/core/reports/reports";
import { REVENUE_COLUMNS, TAX_COLUMNS } from "@invoicing/core/reports/resource";
import { toCsv } from "../http/csv";
import type { AppEnv } from "../http/app-env";
import { describe } from "../http/describe";
import { agingQuery, monthlyReportQuery } from "../schemas/reports";
import { AgingReport, RevenueRow, TaxRow } from "../schemas/resources";
import { queryParams } from "../http/validators";

const tag = "Reports";

const MONTHS_TEXT =
  "`from`/`to`: months `YYYY-MM` (UTC), inclusive, at most 36 months apart; default the last 12 months up to the current one. " +
  "`format=csv` answers `text/csv`: a header row of the field names, then the same rows. Kept from the change stream: " +
  "a change shows within seconds, each counted once; reads a few aggregate items, however many records (docs/reports.md).";

/** A monthly report as JSON, or as CSV named after its months. */
function monthly<R extends object>(
  c: Context<AppEnv>,
  name: string,
  rows: R[],
  columns: readonly (keyof R & string)[],
  format: "json" | "csv",
  months: string[],
): Response {
  if (format === "json") return c.json(rows);
  const filename = `${name}-${months[0]}-to-${months[months.length - 1]}.csv`;
  return c.body(toCsv(columns, rows), 200, {
    "Content-Type": "text/csv; charset=utf-8",
    "Content-Disposition": `attachment; filename="${filename}"`,
  });
}

/** Reports (API.md section 18; docs/reports.md). */
export const reports = new Hono<AppEnv>()
  .get(
    "/reports/aging",
    describe({
      operationId: "getAgingReport",
      tag,
      summary: "Receivables by age",
      description:
        "The open invoices (finalized, sent or overdue with `amountDue` > 0), each in a bucket by `daysPastDue` = ceil((asOf − dueDate) / 1 day): ≤ 0 current, 1–30, 31–60, 61–90, > 90; summed per currency and per client and currency. Exact at once: reads the open invoices only.",
      success: { status: 200, description: "The aging report.", schema: AgingReport },
    }),
    queryParams(agingQuery),
    async (c) => {
      const ctx = c.get("ctx");
      const { asOf } = c.req.valid("query");
      return c.json(await agingReport(ctx, asOf === undefined ? ctx.clock() : new Date(asOf)));
    },
  )
  .get(
    "/reports/revenue",
    describe({
      operationId: "getRevenueReport",
      tag,
      summary: "Invoiced, credited, voided, net and collected per month",
      description: `One row per month of the range for each currency with any activity in it (zeros where a month has none), by month, then currency. Every document counts in the month it was issued; payments by \`paidAt\`, as they stand now. ${MONTHS_TEXT}`,
      success: { status: 200, description: "The months' figures.", schema: RevenueRow, array: true, csv: true },
    }),
    queryParams(monthlyReportQuery),
    async (c) => {
      const ctx = c.get("ctx");
      const { from, to, format } = c.req.valid("query");
      const months = monthsOf(ctx.clock(), { from, to });
      return monthly(c, "revenue", await revenueReport(ctx, { from, to }), REVENUE_COLUMNS, format, months);
    },
  )
  .get(
    "/reports/tax",
    describe({
      operationId: "getTaxReport",
      tag,
      summary: "Taxable amounts and tax per currency, category and rate",
      description: `Over the months: the tax breakdown of the invoices issued in them, minus that of the credit notes issued in them, minus, for each invoice voided in them, its breakdown less its credit notes'. By currency, then rate descending, then category; rows of two zeros left out. What a VAT return is filled from. ${MONTHS_TEXT}`,
      success: { status: 200, description: "The tax rows.", schema: TaxRow, array: true, csv: true },
    }),
    queryParams(monthlyReportQuery),
    async (c) => {
      const ctx = c.get("ctx");
      const { from, to, format } = c.req.valid("query");
      const months = monthsOf(ctx.clock(), { from, to });
      return monthly(c, "tax", await taxReport(ctx, { from, to }), TAX_COLUMNS, format, months);
    },
  );
