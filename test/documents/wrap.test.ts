import { PDFDocument, StandardFonts } from "pdf-lib";
import { beforeAll, describe, expect, it } from "vitest";
import { sanitize, wrap } from "@invoicing/functions/pdf/layout";

/**
 * The PDF's line wrapping on the worst input a valid invoice can hold. Asserted on the result —
 * every line fits, nothing is lost or reordered — not on time; `npm run bench` reports the time.
 */
let font: Awaited<ReturnType<PDFDocument["embedFont"]>>;
beforeAll(async () => {
  font = await (await PDFDocument.create()).embedFont(StandardFonts.Helvetica);
});

const fits = (lines: string[], size: number, width: number) =>
  lines.every((line) => font.widthOfTextAtSize(line, size) <= width + 1e-9);

describe("wrap", () => {
  it("cuts 1000-character words without spaces into lines that fit, losing nothing", () => {
    for (const char of ["W", "i", "m", "é", "1"]) {
      const word = char.repeat(1000);
      const lines = wrap(word, font, 9.5, 235);
      expect(fits(lines, 9.5, 235)).toBe(true);
      expect(lines.join("")).toBe(sanitize(word, font));
      // Greedy: every line but the last is full (one more character would not fit).
      for (const line of lines.slice(0, -1)) expect(font.widthOfTextAtSize(line + char, 9.5)).toBeGreaterThan(235);
    }
  });

  it("wraps 100 such lines and 5000-character notes, keeping words, breaks and order", () => {
    const descriptions = Array.from({ length: 100 }, (_, i) => "W".repeat(995) + String(i).padStart(5, "0"));
    for (const text of descriptions) {
      const lines = wrap(text, font, 9.5, 235);
      expect(fits(lines, 9.5, 235)).toBe(true);
      expect(lines.join("")).toBe(text);
    }
    const notes = Array.from({ length: 500 }, (_, i) =>
      i % 50 === 49 ? "word\n" : i % 7 === 0 ? "Wortzusammensetzung" : "word",
    ).join(" ");
    const lines = wrap(notes, font, 9, 499);
    expect(fits(lines, 9, 499)).toBe(true);
    // The words, in order, and the paragraph breaks are all there.
    expect(lines.join(" ").split(/\s+/).filter(Boolean)).toEqual(notes.split(/\s+/).filter(Boolean));
    expect(lines.length).toBeGreaterThanOrEqual(notes.split("\n").length);
    const long = wrap(`N${"M".repeat(4998)}Z`, font, 9, 499);
    expect(fits(long, 9, 499)).toBe(true);
    expect(long.join("")).toBe(`N${"M".repeat(4998)}Z`);
  });
});
