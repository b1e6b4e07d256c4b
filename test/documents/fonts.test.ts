import { readFileSync } from "node:fs";
import fontkit from "@pdf-lib/fontkit";
import { describe, expect, it } from "vitest";
import { packageFile } from "@invoicing/functions/package-files";
import { EMBEDDED_FONT_FILES, EMBEDDED_FONT_PACKAGE } from "@invoicing/functions/pdf/font-files";
import { embeddedPrograms, sfntOfWoff } from "@invoicing/functions/pdf/fonts";

/**
 * Issue 29, finding 8: the first Factur-X of a cold Documents function took 2.66 s. Most of a
 * Factur-X's drawing went to fontkit inflating a WOFF table (in JavaScript) on every read of it —
 * the whole glyf table again for each glyph measured, drawn or subset. The fonts are now unwrapped
 * from WOFF once, with Node's zlib, into the plain TrueType fontkit reads without inflating
 * (npm run bench, "Factur-X": CPU of the first and second render). Here: what fontkit gets is that
 * plain font, and it is the same font — every table's checksum as the WOFF records it, the same
 * glyphs and metrics.
 */
const woffs = Object.entries(EMBEDDED_FONT_FILES).map(([style, file]) => {
  const path = packageFile(EMBEDDED_FONT_PACKAGE, file);
  if (!path) throw new Error(`${file} is not installed`);
  return [style, readFileSync(path)] as const;
});

/** The sfnt table checksum (OpenType spec): the sum of the table's big-endian 32-bit words. */
function checksum(data: Buffer): number {
  const padded = Buffer.concat([data, Buffer.alloc((4 - (data.length % 4)) % 4)]);
  let sum = 0;
  for (let i = 0; i < padded.length; i += 4) sum = (sum + padded.readUInt32BE(i)) >>> 0;
  return sum;
}

describe("the embedded fonts, unwrapped from WOFF once", () => {
  it("are what fontkit is given: plain TrueType, not WOFF", () => {
    for (const [style, program] of Object.entries(embeddedPrograms())) {
      expect(Buffer.from(program).toString("latin1", 0, 4), style).not.toBe("wOFF");
      expect(Buffer.from(program).readUInt32BE(0), style).toBe(0x00010000);
      expect(fontkit.create(Buffer.from(program)).constructor.name, style).toBe("TTFFont");
    }
  });

  it.each(woffs)("%s: every table intact (its WOFF checksum), the same glyphs and advance widths", (_style, woff) => {
    const sfnt = Buffer.from(sfntOfWoff(woff));
    const count = sfnt.readUInt16BE(4);
    expect(count).toBe(woff.readUInt16BE(12));
    const expected = new Map<string, number>();
    for (let i = 0; i < count; i++)
      expected.set(woff.toString("latin1", 44 + i * 20, 48 + i * 20), woff.readUInt32BE(60 + i * 20));
    for (let i = 0; i < count; i++) {
      const tag = sfnt.toString("latin1", 12 + i * 16, 16 + i * 16);
      const offset = sfnt.readUInt32BE(20 + i * 16);
      const length = sfnt.readUInt32BE(24 + i * 16);
      expect(offset % 4, tag).toBe(0);
      const data = sfnt.subarray(offset, offset + length);
      // head's checksum is computed with its checkSumAdjustment (bytes 8–11) as zero.
      const body = tag === "head" ? Buffer.concat([data.subarray(0, 8), Buffer.alloc(4), data.subarray(12)]) : data;
      expect(checksum(body), tag).toBe(expected.get(tag));
    }
    const fromWoff = fontkit.create(woff);
    const fromSfnt = fontkit.create(sfnt);
    expect(fromWoff.constructor.name).toBe("WOFFFont");
    expect([fromSfnt.numGlyphs, fromSfnt.unitsPerEm]).toEqual([fromWoff.numGlyphs, fromWoff.unitsPerEm]);
    const text = "Invoice INV-000001 · Müller GmbH · € 1.234,50 «Zürich» — ÆØÅ æøå ß";
    const advances = (font: typeof fromWoff) => font.layout(text).glyphs.map((g) => [g.id, g.advanceWidth]);
    expect(advances(fromSfnt)).toEqual(advances(fromWoff));
  });

  it("leaves a plain font as it is", () => {
    const sfnt = sfntOfWoff(woffs[0]![1]);
    expect(sfntOfWoff(sfnt)).toBe(sfnt);
  });
});
