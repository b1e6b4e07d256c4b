import { describe, expect, it } from "vitest";
import { csvField, toCsv } from "@invoicing/functions/http/csv";

/**
 * toCsv itself (http/csv.ts), before any text column reaches a report: RFC 4180 quoting, and the
 * neutralising of a text a spreadsheet would run as a formula.
 */
describe("toCsv", () => {
  it("a header row of the field names, then one CRLF line per row, in the columns' order", () => {
    const rows = [
      { month: "2026-11", currency: "EUR", net: "10.00", extra: "not a column" },
      { month: "2026-12", currency: "USD", net: "0.00", extra: "x" },
    ];
    expect(toCsv(["month", "currency", "net"], rows)).toBe(
      "month,currency,net\r\n2026-11,EUR,10.00\r\n2026-12,USD,0.00\r\n",
    );
    expect(toCsv(["month"], [])).toBe("month\r\n");
  });

  it("quotes a field with a comma, a quote or a line break, doubling its quotes", () => {
    expect(csvField("a,b")).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField("two\nlines")).toBe('"two\nlines"');
    expect(csvField("cr\rhere")).toBe('"cr\rhere"');
    expect(csvField("crlf\r\nhere")).toBe('"crlf\r\nhere"');
    expect(csvField("plain text")).toBe("plain text");
    expect(csvField(null)).toBe("");
    expect(csvField(undefined)).toBe("");
    expect(csvField(42)).toBe("42");
    const row = { name: 'Müller, "M&M" GmbH\nBerlin', total: "1,234.50" };
    expect(toCsv(["name", "total"], [row])).toBe('name,total\r\n"Müller, ""M&M"" GmbH\nBerlin","1,234.50"\r\n');
  });

  it("neutralises a leading = + - @ (and tab, CR) with a quote, so no spreadsheet runs it as a formula", () => {
    expect(csvField("=SUM(A1:A9)")).toBe("'=SUM(A1:A9)");
    expect(csvField("+1+1")).toBe("'+1+1");
    expect(csvField("-2+3")).toBe("'-2+3");
    expect(csvField("@cmd")).toBe("'@cmd");
    expect(csvField("\tx")).toBe("'\tx");
    // Neutralised, then quoted when it has what must be quoted.
    expect(csvField('=HYPERLINK("http://x.example","a,b")')).toBe('"\'=HYPERLINK(""http://x.example"",""a,b"")"');
    expect(csvField("\r=1")).toBe('"\'\r=1"');
    // Only at the start; and a plain number keeps its sign (a report's negative amount).
    expect(csvField("a=b")).toBe("a=b");
    expect(csvField("-5.00")).toBe("-5.00");
    expect(csvField("+7")).toBe("+7");
    expect(csvField("-0.19")).toBe("-0.19");
    expect(csvField("-5.00e3")).toBe("'-5.00e3");
    expect(toCsv(["v"], [{ v: "=1+2" }, { v: "-1.50" }])).toBe("v\r\n'=1+2\r\n-1.50\r\n");
  });
});
