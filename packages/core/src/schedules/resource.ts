import * as v from "valibot";
import { LineItem, taxBreakdownOut, totals } from "../documents/resource";
import { currencyOut, idOut, nullableText, paymentTermsDaysOut, timestampOut } from "../resource";
import { FREQUENCIES } from "./recurrence";

/** The recurring schedule resource's response shape (see ../resource.ts); model.ts holds the item. */
export const SCHEDULE_STATUSES = ["active", "paused", "completed", "cancelled"] as const;
export type ScheduleStatus = (typeof SCHEDULE_STATUSES)[number];

export const RecurringSchedule = v.strictObject({
  id: idOut,
  clientId: idOut,
  status: v.picklist(SCHEDULE_STATUSES),
  frequency: v.picklist(FREQUENCIES),
  startDate: timestampOut,
  endDate: v.nullable(timestampOut),
  maxOccurrences: v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1))),
  occurrencesGenerated: v.pipe(v.number(), v.integer(), v.minValue(0)),
  nextRunAt: v.nullable(
    v.pipe(timestampOut, v.description("Next occurrence to generate; null once completed or cancelled")),
  ),
  lastRunAt: v.nullable(timestampOut),
  lastInvoiceId: v.nullable(idOut),
  autoSend: v.boolean(),
  paymentTermsDays: paymentTermsDaysOut,
  currency: currencyOut,
  // Copied to every generated invoice, with the three after it.
  notes: nullableText,
  terms: nullableText,
  taxExemptionReason: nullableText,
  buyerReference: nullableText,
  purchaseOrderReference: nullableText,
  lineItems: v.array(LineItem),
  ...totals,
  createdAt: timestampOut,
  updatedAt: timestampOut,
  taxBreakdown: taxBreakdownOut,
});
export type RecurringSchedule = v.InferOutput<typeof RecurringSchedule>;
