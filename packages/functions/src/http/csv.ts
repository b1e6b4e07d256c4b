/**
 * RFC 4180 CSV: a header row of the field names, then one line per row, CRLF line ends; a field
 * with a comma, quote or line break is quoted (quotes doubled).
 *
 * A text that a spreadsheet program would run as a formula — one that starts with `=`, `+`, `-`,
 * `@`, a tab or a carriage return (OWASP's "CSV injection") — is neutralised with a leading `'`,
 * which spreadsheets read as "this is text" and do not show. A plain number keeps its sign: `-5.00`
 * is a refund's amount, never a formula, and the CSV holds the same values as the JSON.
 */
export function toCsv<R extends object>(columns: readonly (keyof R & string)[], rows: readonly R[]): string {
  const lines = [columns.map(csvField).join(","), ...rows.map((row) => columns.map((c) => csvField(row[c])).join(","))];
  return `${lines.join("\r\n")}\r\n`;
}

const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^[+-]?\d+(\.\d+)?$/;

/** One field: empty for null, neutralised when it could run as a formula, quoted when it must be. */
export function csvField(value: unknown): string {
  const raw = value === null || value === undefined ? "" : String(value);
  const text = FORMULA_START.test(raw) && !PLAIN_NUMBER.test(raw) ? `'${raw}` : raw;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
