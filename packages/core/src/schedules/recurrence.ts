/**
 * Occurrence arithmetic of recurring schedules, pure and free of I/O.
 *
 * Occurrence n (0-based) is `start + n periods`, always computed from the anchor `start` — never
 * from occurrence n-1 — so a short month clamps only its own occurrence: Jan 31 monthly gives
 * Jan 31, Feb 28 (29), Mar 31, Apr 30, never "the 28th forever after February". Month-based
 * periods count calendar months and clamp the day to the target month's last day; day-based ones
 * add exact multiples of 24 h (UTC has no DST). The time of day of `start` is kept.
 */

export const FREQUENCIES = ["daily", "weekly", "biweekly", "monthly", "quarterly", "semiannually", "yearly"] as const;
export type Frequency = (typeof FREQUENCIES)[number];

type Period = { days: number } | { months: number };

const PERIODS: Record<Frequency, Period> = {
  daily: { days: 1 },
  weekly: { days: 7 },
  biweekly: { days: 14 },
  monthly: { months: 1 },
  quarterly: { months: 3 },
  semiannually: { months: 6 },
  yearly: { months: 12 },
};

const DAY_MS = 86_400_000;
/** The last instant an ISO 8601 timestamp of the usual shape can hold; later occurrences do not exist. */
const LAST_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const daysInMonth = (year: number, month0: number): number => new Date(Date.UTC(year, month0 + 1, 0)).getUTCDate();

/**
 * The time of occurrence `n` of a schedule anchored at `start` (an ISO timestamp), as an ISO
 * timestamp; null when it would fall after year 9999 (the schedule has no such occurrence).
 */
export function occurrenceAt(start: string, frequency: Frequency, n: number): string | null {
  if (!Number.isSafeInteger(n) || n < 0)
    throw new RangeError(`occurrence index must be a non-negative integer, got ${n}`);
  const ms = occurrenceMs(Date.parse(start), PERIODS[frequency], n);
  return ms > LAST_MS ? null : new Date(ms).toISOString();
}

function occurrenceMs(startMs: number, period: Period, n: number): number {
  if ("days" in period) return startMs + n * period.days * DAY_MS;
  const s = new Date(startMs);
  const monthIndex = s.getUTCMonth() + n * period.months;
  if (monthIndex / 12 > 10_000) return Infinity; // far past year 9999; avoids Date overflow
  const year = s.getUTCFullYear() + Math.floor(monthIndex / 12);
  const month0 = monthIndex % 12;
  const day = Math.min(s.getUTCDate(), daysInMonth(year, month0));
  const date = new Date(0);
  // setUTCFullYear rather than Date.UTC: Date.UTC maps years 0–99 to 1900–1999.
  date.setUTCFullYear(year, month0, day);
  date.setUTCHours(s.getUTCHours(), s.getUTCMinutes(), s.getUTCSeconds(), s.getUTCMilliseconds());
  return date.getTime();
}

/**
 * The index of the first occurrence at or after `time` (0 when `time` is not after `start`); null
 * when there is none before year 10000. Occurrences strictly increase, so this is a search on a
 * monotone sequence: an estimate from the elapsed time, then corrected by a step or two.
 */
export function firstOccurrenceAtOrAfter(start: string, frequency: Frequency, time: string): number | null {
  const startMs = Date.parse(start);
  const target = Date.parse(time);
  if (target <= startMs) return 0;
  if (target > LAST_MS) return null;
  const period = PERIODS[frequency];
  const periodMs = "days" in period ? period.days * DAY_MS : period.months * 28 * DAY_MS;
  // Periods are at least `periodMs` long (a month has ≥ 28 days), so this never overshoots by much.
  let n =
    "days" in period
      ? Math.ceil((target - startMs) / periodMs)
      : Math.max(0, monthsBetween(startMs, target, period.months) - 1);
  while (n > 0 && occurrenceMs(startMs, period, n - 1) >= target) n--;
  while (occurrenceMs(startMs, period, n) < target) n++;
  return occurrenceMs(startMs, period, n) > LAST_MS ? null : n;
}

/** Whole periods of `months` months between the calendar months of two instants. */
function monthsBetween(fromMs: number, toMs: number, months: number): number {
  const from = new Date(fromMs),
    to = new Date(toMs);
  const diff = (to.getUTCFullYear() - from.getUTCFullYear()) * 12 + (to.getUTCMonth() - from.getUTCMonth());
  return Math.floor(diff / months);
}
