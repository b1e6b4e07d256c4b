/**
 * RFC 4180 CSV: a header row of the field names, then one line per row, CRLF line ends; a field
 * with a comma, quote or line break is quoted (quotes doubled).
 */
export function toCsv<R extends object>(columns: readonly (keyof R & string)[], rows: readonly R[]): string {
  const field = (value: unknown): string => {
    const text = value === null || value === undefined ? "" : String(value);
    return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  };
  const lines = [columns.join(","), ...rows.map((row) => columns.map((c) => field(row[c])).join(","))];
  return `${lines.join("\r\n")}\r\n`;
}
