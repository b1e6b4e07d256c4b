import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FREQUENCIES, firstOccurrenceAtOrAfter, occurrenceAt, type Frequency } from "../src/schedules/recurrence";

/** The first `count` occurrences of a schedule. */
const series = (start: string, frequency: Frequency, count: number) =>
  Array.from({ length: count }, (_, n) => occurrenceAt(start, frequency, n));

const day = (iso: string | null) => iso?.slice(0, 10);

describe("occurrence arithmetic: examples", () => {
  it("Jan 31 monthly clamps each month on its own: Jan 31, Feb 28, Mar 31, Apr 30, …", () => {
    expect(series("2027-01-31T00:00:00.000Z", "monthly", 7).map(day)).toEqual([
      "2027-01-31",
      "2027-02-28",
      "2027-03-31",
      "2027-04-30",
      "2027-05-31",
      "2027-06-30",
      "2027-07-31",
    ]);
  });

  it("in a leap year February gets the 29th", () => {
    expect(series("2028-01-31T00:00:00.000Z", "monthly", 4).map(day)).toEqual([
      "2028-01-31",
      "2028-02-29",
      "2028-03-31",
      "2028-04-30",
    ]);
    expect(series("2028-01-30T00:00:00.000Z", "monthly", 3).map(day)).toEqual([
      "2028-01-30",
      "2028-02-29",
      "2028-03-30",
    ]);
    expect(series("2027-01-29T00:00:00.000Z", "monthly", 3).map(day)).toEqual([
      "2027-01-29",
      "2027-02-28",
      "2027-03-29",
    ]);
  });

  it("follows the Gregorian century rule: 2100 is not a leap year, 2000 was", () => {
    expect(occurrenceAt("2100-01-31T00:00:00.000Z", "monthly", 1)).toBe("2100-02-28T00:00:00.000Z");
    expect(occurrenceAt("2000-01-31T00:00:00.000Z", "monthly", 1)).toBe("2000-02-29T00:00:00.000Z");
  });

  it("Feb 29 yearly falls on Feb 28 in common years and returns to the 29th in leap years", () => {
    expect(series("2028-02-29T12:00:00.000Z", "yearly", 5).map(day)).toEqual([
      "2028-02-29",
      "2029-02-28",
      "2030-02-28",
      "2031-02-28",
      "2032-02-29",
    ]);
  });

  it("quarterly and semiannually are 3 and 6 calendar months, clamped", () => {
    expect(series("2026-08-31T00:00:00.000Z", "quarterly", 5).map(day)).toEqual([
      "2026-08-31",
      "2026-11-30",
      "2027-02-28",
      "2027-05-31",
      "2027-08-31",
    ]);
    expect(series("2027-08-31T00:00:00.000Z", "semiannually", 4).map(day)).toEqual([
      "2027-08-31",
      "2028-02-29",
      "2028-08-31",
      "2029-02-28",
    ]);
  });

  it("daily, weekly and biweekly add 1, 7 and 14 days across month, year and leap-day boundaries", () => {
    expect(series("2027-12-30T08:00:00.000Z", "daily", 4)).toEqual([
      "2027-12-30T08:00:00.000Z",
      "2027-12-31T08:00:00.000Z",
      "2028-01-01T08:00:00.000Z",
      "2028-01-02T08:00:00.000Z",
    ]);
    expect(series("2028-02-22T00:00:00.000Z", "weekly", 3).map(day)).toEqual([
      "2028-02-22",
      "2028-02-29",
      "2028-03-07",
    ]);
    expect(series("2026-12-24T00:00:00.000Z", "biweekly", 3).map(day)).toEqual([
      "2026-12-24",
      "2027-01-07",
      "2027-01-21",
    ]);
  });

  it("keeps the start's time of day, to the millisecond", () => {
    for (const frequency of FREQUENCIES) {
      expect(occurrenceAt("2026-11-22T09:30:15.250Z", frequency, 3)!.slice(10)).toBe("T09:30:15.250Z");
    }
  });

  it("occurrence 0 is the start itself, for every frequency", () => {
    for (const frequency of FREQUENCIES)
      expect(occurrenceAt("2026-11-22T09:30:00.000Z", frequency, 0)).toBe("2026-11-22T09:30:00.000Z");
  });

  it("has no occurrence after year 9999, and rejects a negative index", () => {
    expect(occurrenceAt("9999-12-01T00:00:00.000Z", "monthly", 1)).toBeNull();
    expect(occurrenceAt("9999-12-31T00:00:00.000Z", "daily", 1)).toBeNull();
    expect(occurrenceAt("2026-01-01T00:00:00.000Z", "yearly", 1e15)).toBeNull();
    expect(() => occurrenceAt("2026-01-01T00:00:00.000Z", "daily", -1)).toThrow(RangeError);
  });

  it("finds the first occurrence at or after a time", () => {
    const start = "2027-01-31T00:00:00.000Z";
    expect(firstOccurrenceAtOrAfter(start, "monthly", "2026-12-01T00:00:00.000Z")).toBe(0);
    expect(firstOccurrenceAtOrAfter(start, "monthly", start)).toBe(0);
    expect(firstOccurrenceAtOrAfter(start, "monthly", "2027-01-31T00:00:00.001Z")).toBe(1);
    expect(firstOccurrenceAtOrAfter(start, "monthly", "2027-02-28T00:00:00.000Z")).toBe(1);
    expect(firstOccurrenceAtOrAfter(start, "monthly", "2027-03-01T00:00:00.000Z")).toBe(2);
    expect(firstOccurrenceAtOrAfter(start, "weekly", "2027-02-14T00:00:00.000Z")).toBe(2);
    expect(firstOccurrenceAtOrAfter(start, "weekly", "2027-02-14T00:00:00.001Z")).toBe(3);
    expect(firstOccurrenceAtOrAfter("9999-12-01T00:00:00.000Z", "monthly", "9999-12-02T00:00:00.000Z")).toBeNull();
  });
});

// Starts from year 1900 to 2999 at any millisecond; indexes up to 1000 periods (yearly: to 3999),
// so every occurrence exists and many leap and century years are crossed.
const instant = fc
  .date({ min: new Date("1900-01-01T00:00:00.000Z"), max: new Date("2999-12-31T23:59:59.999Z"), noInvalidDate: true })
  .map((d) => d.toISOString());
const frequency = fc.constantFrom(...FREQUENCIES);
const index = fc.integer({ min: 0, max: 1000 });

const MONTHS: Partial<Record<Frequency, number>> = { monthly: 1, quarterly: 3, semiannually: 6, yearly: 12 };
const DAYS: Partial<Record<Frequency, number>> = { daily: 1, weekly: 7, biweekly: 14 };
// An oracle independent of Date: the Gregorian month lengths.
const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const lastDay = (year: number, month0: number) =>
  [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month0]!;

describe("occurrence arithmetic: laws (fast-check)", () => {
  it("occurrences strictly increase", () => {
    fc.assert(
      fc.property(instant, frequency, index, (start, f, n) => {
        const a = occurrenceAt(start, f, n)!;
        const b = occurrenceAt(start, f, n + 1)!;
        expect(Date.parse(b)).toBeGreaterThan(Date.parse(a));
      }),
      { numRuns: 2000 },
    );
  });

  it("near the end of the calendar: once an occurrence does not exist, no later one does", () => {
    const late = fc
      .date({
        min: new Date("9990-01-01T00:00:00.000Z"),
        max: new Date("9999-12-31T23:59:59.999Z"),
        noInvalidDate: true,
      })
      .map((d) => d.toISOString());
    fc.assert(
      fc.property(late, frequency, fc.integer({ min: 0, max: 5000 }), (start, f, n) => {
        const a = occurrenceAt(start, f, n);
        const b = occurrenceAt(start, f, n + 1);
        if (a === null) expect(b).toBeNull();
        else if (b !== null) expect(b > a).toBe(true);
      }),
    );
  });

  it("day-based occurrence n is exactly n periods of 24 h after the start", () => {
    fc.assert(
      fc.property(
        instant,
        fc.constantFrom("daily", "weekly", "biweekly") as fc.Arbitrary<Frequency>,
        index,
        (start, f, n) => {
          expect(Date.parse(occurrenceAt(start, f, n)!) - Date.parse(start)).toBe(n * DAYS[f]! * 86_400_000);
        },
      ),
    );
  });

  it("month-based occurrence n lies n periods of calendar months on, on min(start day, month length), same time", () => {
    fc.assert(
      fc.property(
        instant,
        fc.constantFrom("monthly", "quarterly", "semiannually", "yearly") as fc.Arbitrary<Frequency>,
        index,
        (start, f, n) => {
          const s = new Date(start);
          const o = new Date(occurrenceAt(start, f, n)!);
          const months = (o.getUTCFullYear() - s.getUTCFullYear()) * 12 + o.getUTCMonth() - s.getUTCMonth();
          expect(months).toBe(n * MONTHS[f]!);
          expect(o.getUTCDate()).toBe(Math.min(s.getUTCDate(), lastDay(o.getUTCFullYear(), o.getUTCMonth())));
          expect(start.slice(10)).toBe(o.toISOString().slice(10));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("the n-th occurrence never depends on earlier clamping: a month long enough gets the start's day back", () => {
    // Starts on the 29th–31st: the ones that clamp. Whatever short months came before, occurrence n
    // is the start day whenever its own month has that day.
    const lateStart = fc
      .tuple(
        fc.integer({ min: 1900, max: 2999 }),
        fc.constantFrom(0, 2, 4, 6, 7, 9, 11),
        fc.integer({ min: 29, max: 31 }),
      )
      .map(([y, m, d]) => new Date(Date.UTC(y, m, d, 10, 0, 0)).toISOString());
    fc.assert(
      fc.property(
        lateStart,
        fc.constantFrom("monthly", "quarterly", "semiannually", "yearly") as fc.Arbitrary<Frequency>,
        index,
        (start, f, n) => {
          const o = new Date(occurrenceAt(start, f, n)!);
          const startDay = new Date(start).getUTCDate();
          if (lastDay(o.getUTCFullYear(), o.getUTCMonth()) >= startDay) expect(o.getUTCDate()).toBe(startDay);
          // and it agrees with stepping the anchor's month directly, never via occurrence n-1
          expect(occurrenceAt(start, "monthly", n * MONTHS[f]!)).toBe(o.toISOString());
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("firstOccurrenceAtOrAfter gives the least n whose occurrence is at or after the time", () => {
    const offset = fc.integer({ min: -10 * 86_400_000, max: 4000 * 86_400_000 });
    fc.assert(
      fc.property(instant, frequency, offset, (start, f, delta) => {
        const time = new Date(Date.parse(start) + delta).toISOString();
        const n = firstOccurrenceAtOrAfter(start, f, time)!;
        expect(Date.parse(occurrenceAt(start, f, n)!)).toBeGreaterThanOrEqual(Date.parse(time));
        if (n > 0) expect(Date.parse(occurrenceAt(start, f, n - 1)!)).toBeLessThan(Date.parse(time));
      }),
      { numRuns: 2000 },
    );
  });
});
