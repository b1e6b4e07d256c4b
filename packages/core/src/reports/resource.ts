import * as v from "valibot";
import { TAX_CATEGORIES } from "../documents/line-items";
import { currencyOut, idOut, moneyOut, taxRateOut, text, timestampOut } from "../resource";

/** The reports' response shapes (API.md section 18; docs/reports.md says what each figure counts). */
const monthOut = v.pipe(
  v.string(),
  v.regex(/^\d{4}-(0[1-9]|1[0-2])$/),
  v.metadata({ description: "A calendar month, UTC", examples: ["2026-11"] }),
);
const count = v.pipe(v.number(), v.integer(), v.minValue(0));

export const RevenueRow = v.strictObject({
  month: monthOut,
  currency: currencyOut,
  invoiced: v.pipe(
    moneyOut,
    v.description("Σ total of the invoices issued in the month (by issueDate), whatever their status now"),
  ),
  credited: v.pipe(moneyOut, v.description("Σ total of the credit notes issued in the month")),
  voided: v.pipe(
    moneyOut,
    v.description(
      "Σ (total − creditedAmount) of the issued invoices voided in the month (by voidedAt), as at the void",
    ),
  ),
  net: v.pipe(moneyOut, v.description("invoiced − credited − voided")),
  collected: v.pipe(
    moneyOut,
    v.description(
      "Σ (amount − refundedAmount) of the payments paid in the month (by paidAt), as they stand now; needs_refund left out",
    ),
  ),
  invoiceCount: count,
  creditNoteCount: count,
  paymentCount: v.pipe(count, v.description("The payments counted in collected (a wholly refunded one too)")),
});
export type RevenueRow = v.InferOutput<typeof RevenueRow>;

export const TaxRow = v.strictObject({
  currency: currencyOut,
  taxCategory: v.picklist(TAX_CATEGORIES),
  taxRate: taxRateOut,
  taxableAmount: moneyOut,
  taxAmount: moneyOut,
});
export type TaxRow = v.InferOutput<typeof TaxRow>;

const buckets = {
  currency: currencyOut,
  current: v.pipe(moneyOut, v.description("Σ amountDue not yet past due (daysPastDue ≤ 0)")),
  overdue1to30: moneyOut,
  overdue31to60: moneyOut,
  overdue61to90: moneyOut,
  overdueOver90: moneyOut,
  total: v.pipe(moneyOut, v.description("Σ amountDue of the row's open invoices")),
  invoiceCount: count,
};
export const AgingTotal = v.strictObject(buckets);
export const AgingClientRow = v.strictObject({
  clientId: idOut,
  clientName: v.pipe(text, v.description("As on the client's most recent open invoice")),
  ...buckets,
});
export const AgingReport = v.strictObject({
  asOf: timestampOut,
  totals: v.pipe(v.array(AgingTotal), v.description("One row per currency, ascending")),
  clients: v.pipe(
    v.array(AgingClientRow),
    v.description("One row per client and currency, by clientId, then currency"),
  ),
});
export type AgingReport = v.InferOutput<typeof AgingReport>;

/** The fields of each CSV report, in column order (the header row). */
export const REVENUE_COLUMNS = Object.keys(RevenueRow.entries) as (keyof RevenueRow)[];
export const TAX_COLUMNS = Object.keys(TaxRow.entries) as (keyof TaxRow)[];
