import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { addDays, parseTimestamp, startOfUtcDay } from "../src/time";

/** Timestamp inputs: RFC 3339 date-times or YYYY-MM-DD; output ISO UTC with ms. */
describe("parseTimestamp", () => {
  it.each([
    ["2026-11-22T09:30:00Z", "2026-11-22T09:30:00.000Z"],
    ["2026-11-22T09:30:00.000Z", "2026-11-22T09:30:00.000Z"],
    ["2026-11-22t09:30:00z", "2026-11-22T09:30:00.000Z"],
    ["2026-11-22T09:30:00.5+02:00", "2026-11-22T07:30:00.500Z"],
    ["2026-11-22T09:30:00-05:30", "2026-11-22T15:00:00.000Z"],
    ["2026-11-22T09:30:00+00:00", "2026-11-22T09:30:00.000Z"],
    ["2026-11-22T09:30:00-00:00", "2026-11-22T09:30:00.000Z"],
    ["2026-11-22T09:30:00+14:00", "2026-11-21T19:30:00.000Z"],
    ["2026-12-31T23:30:00-01:00", "2027-01-01T00:30:00.000Z"],
    ["2027-01-01T00:15:00+01:00", "2026-12-31T23:15:00.000Z"],
    ["2026-11-22T09:30:00.1Z", "2026-11-22T09:30:00.100Z"],
    ["2026-11-22T09:30:00.12Z", "2026-11-22T09:30:00.120Z"],
    ["2026-11-22T09:30:00.123Z", "2026-11-22T09:30:00.123Z"],
    // The fraction is kept to the millisecond: digits beyond the third are cut, not rounded up.
    ["2026-11-22T09:30:00.123456789Z", "2026-11-22T09:30:00.123Z"],
    ["2026-11-22T09:30:00.9999Z", "2026-11-22T09:30:00.999Z"],
    ["2026-11-22T23:59:59Z", "2026-11-22T23:59:59.000Z"],
    ["2026-11-22", "2026-11-22T00:00:00.000Z"],
    ["2024-02-29", "2024-02-29T00:00:00.000Z"],
    ["2000-02-29T12:00:00Z", "2000-02-29T12:00:00.000Z"],
    ["2028-02-29", "2028-02-29T00:00:00.000Z"],
    ["2026-04-30", "2026-04-30T00:00:00.000Z"],
    ["2026-12-31", "2026-12-31T00:00:00.000Z"],
    // Years below 100 are years, not 1900 + year (Date.UTC's legacy rule).
    ["0099-06-15", "0099-06-15T00:00:00.000Z"],
    ["0004-02-29T00:00:00Z", "0004-02-29T00:00:00.000Z"],
    ["9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"],
  ])("%s → %s", (input, expected) => {
    expect(parseTimestamp(input)).toBe(expected);
  });

  it.each([
    "2026-02-30", // impossible dates
    "2026-02-29", // 2026 is not a leap year
    "1900-02-29", // divisible by 100, not by 400
    "2100-02-29",
    "2026-04-31",
    "2026-06-31",
    "2026-13-01",
    "2026-00-10",
    "2026-11-00",
    "2026-11-32",
    "2026-11-22T24:00:00Z",
    "2026-11-22T09:60:00Z",
    "2026-11-22T09:30:60Z", // leap seconds cannot be represented
    "2026-11-22T09:30Z", // seconds are required
    "2026-11-22T09:30:00", // a date-time needs its offset
    "2026-11-22T09:30:00+24:00",
    "2026-11-22T09:30:00+02:60",
    "2026-11-22T09:30:00+0200",
    "2026-11-22T09:30:00.Z",
    "2026-11-22 09:30:00Z",
    "2026-11-22T",
    "2026-1-5",
    "20261122",
    " 2026-11-22",
    "2026-11-22 ",
    "22/11/2026",
    "1732267800000",
    "",
    "0000-01-01", // no year 0 in output
    "9999-12-31T23:00:00-02:00", // lands in year 10000
  ])("%j is not a timestamp", (input) => {
    expect(parseTimestamp(input)).toBeNull();
  });

  it("reads back every ISO time it writes", () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date("0001-01-01T00:00:00.000Z"),
          max: new Date("9999-12-31T23:59:59.999Z"),
          noInvalidDate: true,
        }),
        (date) => {
          expect(parseTimestamp(date.toISOString())).toBe(date.toISOString());
        },
      ),
    );
  });

  it("an offset names the same instant as its UTC time", () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date("1970-01-02T00:00:00.000Z"),
          max: new Date("9998-12-31T00:00:00.000Z"),
          noInvalidDate: true,
        }),
        fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
        (date, offsetMinutes) => {
          // Writes the instant as local time at the offset, the way a client in that zone would.
          const local = new Date(date.getTime() + offsetMinutes * 60_000).toISOString().slice(0, 23);
          const abs = Math.abs(offsetMinutes);
          const zone = `${offsetMinutes < 0 ? "-" : "+"}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
          expect(parseTimestamp(`${local}${zone}`)).toBe(date.toISOString());
        },
      ),
    );
  });

  it("accepts exactly the real calendar days", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 9999 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 31 }),
        (year, month, day) => {
          const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
          const length = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
          const text = `${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`;
          expect(parseTimestamp(text)).toBe(day <= length ? `${text}T00:00:00.000Z` : null);
        },
      ),
    );
  });
});

describe("day arithmetic", () => {
  it("addDays counts exact days, across months, years and leap days", () => {
    expect(addDays("2026-11-22T09:30:00.000Z", 14)).toBe("2026-12-06T09:30:00.000Z");
    expect(addDays("2026-12-20T00:00:00.000Z", 30)).toBe("2027-01-19T00:00:00.000Z");
    expect(addDays("2024-02-28T12:00:00.000Z", 1)).toBe("2024-02-29T12:00:00.000Z");
    expect(addDays("2026-03-01T00:00:00.000Z", -3)).toBe("2026-02-26T00:00:00.000Z");
    expect(addDays("2026-11-22T09:30:00.123Z", 0)).toBe("2026-11-22T09:30:00.123Z");
  });

  it("startOfUtcDay is midnight UTC of the same day", () => {
    expect(startOfUtcDay(new Date("2026-11-22T23:59:59.999Z"))).toBe("2026-11-22T00:00:00.000Z");
    expect(startOfUtcDay(new Date("2026-11-22T00:00:00.000Z"))).toBe("2026-11-22T00:00:00.000Z");
  });
});
