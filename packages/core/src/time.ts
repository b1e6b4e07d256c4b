/**
 * Timestamps: inputs are RFC 3339 date-times or YYYY-MM-DD dates; outputs are ISO 8601 UTC with
 * milliseconds. Stored as the output string, which sorts chronologically.
 */
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2}))?$/;

const DAY_MS = 86_400_000;

/** Gregorian month length; computed, not asked of Date, which maps years 0–99 to 1900–1999. */
function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Milliseconds since the epoch of a UTC wall time, for any year 0–9999 (Date.UTC shifts 0–99). */
function utcMillis(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  ms: number,
): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}

/** Parses an input timestamp to an ISO string, or null when it is not a valid one. */
export function parseTimestamp(input: string): string | null {
  const m = TIMESTAMP.exec(input);
  if (!m) return null;
  const [, y, mo, d, h = "00", mi = "00", s = "00", frac = "", zone = "Z"] = m;
  const year = Number(y),
    month = Number(mo),
    day = Number(d);
  const hour = Number(h),
    minute = Number(mi),
    second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  if (zone !== "Z" && zone !== "z") {
    const oh = Number(zone.slice(1, 3)),
      om = Number(zone.slice(4, 6));
    if (oh > 23 || om > 59) return null;
    offsetMinutes = (zone[0] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  const ms = Number(frac.slice(0, 3).padEnd(3, "0"));
  const utc = utcMillis(year, month, day, hour, minute, second, ms) - offsetMinutes * 60_000;
  const date = new Date(utc);
  if (Number.isNaN(date.getTime()) || date.getUTCFullYear() < 1 || date.getUTCFullYear() > 9999) return null;
  return date.toISOString();
}

export const addDays = (isoTime: string, days: number): string =>
  new Date(Date.parse(isoTime) + days * DAY_MS).toISOString();

/** 00:00:00.000Z of the UTC day that contains `date`. */
export const startOfUtcDay = (date: Date): string =>
  new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate())).toISOString();
