import { entityKey, withIndexKeys, type IndexedItem } from "../db/keys";
import { readLineItems, taxBreakdown } from "../documents/line-items";
import { toResource } from "../resource";
import { occurrenceAt } from "./recurrence";
import { RecurringSchedule, type ScheduleStatus } from "./resource";

/** The recurring schedule's stored item; the resource's shape is its response schema (./resource.ts). */
export { SCHEDULE_STATUSES } from "./resource";
export type { RecurringSchedule, ScheduleStatus };

export interface ScheduleItem extends Omit<RecurringSchedule, "taxBreakdown">, IndexedItem {
  version: number;
  /**
   * The index of the next occurrence to generate. It differs from occurrencesGenerated once a
   * resume skipped occurrences: occurrence n is always startDate + n periods, while
   * occurrencesGenerated counts invoices only. Generation is conditioned on this index, which is
   * what makes each occurrence happen exactly once.
   */
  nextOccurrence: number;
  /** The id the next new template line gets (line ids are never reused within a schedule). */
  nextLineId: number;
}

/** The public shape: every field present, `null` where there is no value. */
export const toSchedule = (item: ScheduleItem): RecurringSchedule => ({
  ...toResource(item, RecurringSchedule),
  lineItems: readLineItems(item.lineItems),
  taxBreakdown: taxBreakdown(item.lineItems),
});

export const scheduleKey = (userId: string, id: number) => entityKey(userId, "SCHEDULE", id);

/**
 * Where a schedule stands in time, from its occurrence index: the next occurrence's time, and
 * whether the schedule is over — maxOccurrences invoices exist, or the next occurrence is after
 * endDate (one exactly at endDate is included) or beyond the calendar.
 */
function nextOccurrenceState(
  s: Pick<ScheduleItem, "startDate" | "frequency" | "endDate" | "maxOccurrences" | "occurrencesGenerated">,
  nextOccurrence: number,
): { nextRunAt: string | null; finished: boolean } {
  if (s.maxOccurrences !== null && s.occurrencesGenerated >= s.maxOccurrences)
    return { nextRunAt: null, finished: true };
  const at = occurrenceAt(s.startDate, s.frequency, nextOccurrence);
  if (at === null || (s.endDate !== null && at > s.endDate)) return { nextRunAt: null, finished: true };
  return { nextRunAt: at, finished: false };
}

/**
 * Moves a schedule to `completed` when its state says it is over; otherwise leaves it as is. Its
 * index attributes follow (db/keys.ts withIndexKeys): the recurring job's due list holds a schedule
 * only while it is active.
 */
export function settle(item: ScheduleItem): ScheduleItem {
  if (item.status !== "active" && item.status !== "paused") return item;
  const { nextRunAt, finished } = nextOccurrenceState(item, item.nextOccurrence);
  return withIndexKeys(finished ? { ...item, status: "completed", nextRunAt: null } : { ...item, nextRunAt });
}
