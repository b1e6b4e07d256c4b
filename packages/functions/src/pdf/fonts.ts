import { readFileSync } from "node:fs";
import { inflateSync } from "node:zlib";
import type { PDFDocument, PDFFont } from "pdf-lib";
import { packageFile } from "../package-files";
import { EMBEDDED_FONT_FILES, EMBEDDED_FONT_PACKAGE } from "./font-files";

/** fontkit's type as pdf-lib takes it (pdf-lib does not export the name). */
export type Fontkit = Parameters<PDFDocument["registerFontkit"]>[0];

export interface DocumentFonts {
  regular: PDFFont;
  bold: PDFFont;
  italic: PDFFont;
}

/**
 * The fonts a document is drawn in.
 *
 * Standard (every PDF and the page's download): Helvetica, which every reader has, so nothing is
 * embedded and the file stays small.
 *
 * Embedded (an archival PDF: Factur-X is PDF/A-3, and PDF/A requires every font's program inside
 * the file): Arimo, metrically compatible with Helvetica, so the layout is the same to the point.
 * Its Latin files (Basic Latin, Latin-1, €, typographic punctuation: what WinAnsi covers) ship in
 * @fontsource/arimo (font-files.ts) and are read from disk at the first archival PDF (package-files.ts; infra
 * copies them next to the Documents function), and unwrapped from WOFF once (sfntOfWoff). Only
 * the glyphs used are embedded (a subset).
 * The font engine that parses and subsets them (fontkit, 900 KiB) is passed in by the one caller
 * that draws archival PDFs (http/pdf-renderer.ts, in the Documents function), so that the other bundles
 * that draw PDFs (email attachments: the stream subscriber, the jobs) do not carry it.
 * Ligatures and kerning are off: the layout measures text character by character (layout.ts)
 * and must measure exactly what is drawn.
 */

const NO_SUBSTITUTION = { liga: false, clig: false, calt: false, rlig: false, kern: false };

let programs: Record<keyof DocumentFonts, Uint8Array> | undefined;

/** The embedded fonts' programs, as handed to fontkit (plain sfnt: see sfntOfWoff). */
export function embeddedPrograms(): Record<keyof DocumentFonts, Uint8Array> {
  if (programs) return programs;
  const read = (file: string): Uint8Array => {
    const path = packageFile(EMBEDDED_FONT_PACKAGE, file);
    // A deployment defect, not the caller's: infra/api.ts copies these files next to the function.
    if (!path) throw new Error(`font ${EMBEDDED_FONT_PACKAGE}/${file} is not installed next to this function`);
    return sfntOfWoff(readFileSync(path));
  };
  programs = {
    regular: read(EMBEDDED_FONT_FILES.regular),
    bold: read(EMBEDDED_FONT_FILES.bold),
    italic: read(EMBEDDED_FONT_FILES.italic),
  };
  return programs;
}

/**
 * The plain TrueType (sfnt) font inside a WOFF file, its tables inflated once with Node's zlib.
 * Given the WOFF itself, fontkit inflates a table (with a JavaScript inflater) every time it reads
 * from it — the whole glyf table again for each glyph measured, drawn or subset — which made most
 * of a Factur-X's rendering time, the first one's above all (issue 29, finding 8; bench "Factur-X").
 * WOFF 1.0 (W3C): a 44-byte header, then per table its tag, offset, compressed and original length
 * and checksum; a table is zlib-compressed when its two lengths differ.
 */
export function sfntOfWoff(woff: Uint8Array): Uint8Array {
  const buf = Buffer.from(woff.buffer, woff.byteOffset, woff.byteLength);
  if (buf.toString("latin1", 0, 4) !== "wOFF") return woff; // already a plain font
  const flavor = buf.readUInt32BE(4);
  const count = buf.readUInt16BE(12);
  const tables = Array.from({ length: count }, (_, i) => {
    const at = 44 + i * 20;
    const offset = buf.readUInt32BE(at + 4);
    const compressed = buf.readUInt32BE(at + 8);
    const length = buf.readUInt32BE(at + 12);
    const stored = buf.subarray(offset, offset + compressed);
    const data = compressed === length ? stored : inflateSync(stored);
    if (data.length !== length) throw new Error("a WOFF table does not inflate to its declared length");
    return { tag: buf.readUInt32BE(at), checksum: buf.readUInt32BE(at + 16), data };
  });
  // The offset table's binary-search fields, from the largest power of two ≤ the table count.
  const power = 2 ** Math.floor(Math.log2(count));
  const head = Buffer.alloc(12 + 16 * count);
  head.writeUInt32BE(flavor, 0);
  head.writeUInt16BE(count, 4);
  head.writeUInt16BE(power * 16, 6);
  head.writeUInt16BE(Math.log2(power), 8);
  head.writeUInt16BE(count * 16 - power * 16, 10);
  const parts: Buffer[] = [head];
  let offset = head.length;
  for (const [i, table] of tables.entries()) {
    head.writeUInt32BE(table.tag, 12 + i * 16);
    head.writeUInt32BE(table.checksum, 16 + i * 16);
    head.writeUInt32BE(offset, 20 + i * 16);
    head.writeUInt32BE(table.data.length, 24 + i * 16);
    const padded = Buffer.alloc((table.data.length + 3) & ~3);
    table.data.copy(padded);
    parts.push(padded);
    offset += padded.length;
  }
  return Buffer.concat(parts);
}

/** The standard fonts, or, given a font engine (fontkit), the embedded ones. */
export async function documentFonts(pdf: PDFDocument, fontkit?: Fontkit): Promise<DocumentFonts> {
  if (!fontkit) {
    const { StandardFonts } = await import("pdf-lib");
    return {
      regular: await pdf.embedFont(StandardFonts.Helvetica),
      bold: await pdf.embedFont(StandardFonts.HelveticaBold),
      italic: await pdf.embedFont(StandardFonts.HelveticaOblique),
    };
  }
  pdf.registerFontkit(fontkit);
  const files = embeddedPrograms();
  const embed = (bytes: Uint8Array) => pdf.embedFont(bytes, { subset: true, features: NO_SUBSTITUTION });
  return { regular: await embed(files.regular), bold: await embed(files.bold), italic: await embed(files.italic) };
}
