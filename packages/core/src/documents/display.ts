/**
 * How amounts and dates read to a person, in emails, on the public pages and in PDFs alike.
 * Amounts stay exact decimal strings (never numbers): only digits are grouped.
 */

/** `USD 1,234.50` from the stored `"1234.50"`. */
export function displayMoney(amount: string, currency: string): string {
  const negative = amount.startsWith("-");
  const [whole = "0", fraction = "00"] = (negative ? amount.slice(1) : amount).split(".");
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${negative ? "-" : ""}${currency} ${grouped}.${fraction}`;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** `6 Dec 2026` (the UTC day, as every date in the API is UTC); `—` when there is none. */
export function displayDate(iso: string | null | undefined): string {
  if (!iso) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "—";
  return `${date.getUTCDate()} ${MONTHS[date.getUTCMonth()]} ${date.getUTCFullYear()}`;
}
