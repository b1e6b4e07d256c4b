import * as v from "valibot";
import { SCHEDULE_STATUSES } from "@invoicing/core/schedules/model";
import { FREQUENCIES } from "@invoicing/core/schedules/recurrence";
import { paymentTermsDays } from "./clients";
import { currency, id, notes, optionalText, pathId, templateLineItems, timestamp } from "./common";

/**
 * Recurring schedule bodies. Rules that need the clock or the stored schedule
 * (startDate not before today, endDate not before startDate) are checked in core and are 400 too.
 */
const frequency = v.picklist(FREQUENCIES, `must be one of ${FREQUENCIES.join(", ")}`);
const maxOccurrences = v.pipe(
  v.number(),
  v.integer("must be an integer"),
  v.minValue(1, "must be at least 1"),
  v.maxValue(Number.MAX_SAFE_INTEGER),
);
/** A schedule's template has at least one line: an empty recurring invoice is never useful. */

const templateFields = {
  endDate: v.optional(v.nullable(timestamp)),
  maxOccurrences: v.optional(v.nullable(maxOccurrences)),
  autoSend: v.optional(v.boolean()),
  paymentTermsDays: v.optional(paymentTermsDays),
  currency: v.optional(currency),
  notes: v.optional(v.nullable(notes)),
  terms: v.optional(v.nullable(notes)),
  taxExemptionReason: optionalText(500),
  buyerReference: optionalText(200),
  purchaseOrderReference: optionalText(200),
};

export const createScheduleBody = v.strictObject({
  clientId: id,
  frequency,
  startDate: v.optional(timestamp),
  ...templateFields,
  lineItems: templateLineItems,
});

export const updateScheduleBody = v.strictObject({
  clientId: v.optional(id),
  frequency: v.optional(frequency),
  startDate: v.optional(timestamp),
  ...templateFields,
  lineItems: v.optional(templateLineItems),
});

export const scheduleListFilters = {
  status: v.optional(v.picklist(SCHEDULE_STATUSES, `must be one of ${SCHEDULE_STATUSES.join(", ")}`)),
  clientId: v.optional(pathId),
};
