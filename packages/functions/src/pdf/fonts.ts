import { readFileSync } from "node:fs";
import { StandardFonts, type PDFDocument, type PDFFont } from "pdf-lib";
import { packageFile } from "../app/package-files";
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
 * @fontsource/arimo (font-files.ts) and are read from disk at the first archival PDF (app/package-files.ts; infra
 * copies them next to the Documents function). Only the glyphs used are embedded (a subset).
 * The font engine that parses and subsets them (fontkit, 900 KiB) is passed in by the one caller
 * that draws archival PDFs (pdf/renderer.ts, in the Documents function), so that the other bundles
 * that draw PDFs (email attachments: the stream subscriber, the jobs) do not carry it.
 * Ligatures and kerning are off: the layout measures text character by character (document-pdf.ts)
 * and must measure exactly what is drawn.
 */

const NO_SUBSTITUTION = { liga: false, clig: false, calt: false, rlig: false, kern: false };

let programs: Record<keyof DocumentFonts, Uint8Array> | undefined;

function embeddedPrograms(): Record<keyof DocumentFonts, Uint8Array> {
  if (programs) return programs;
  const read = (file: string): Uint8Array => {
    const path = packageFile(EMBEDDED_FONT_PACKAGE, file);
    // A deployment defect, not the caller's: infra/api.ts copies these files next to the function.
    if (!path) throw new Error(`font ${EMBEDDED_FONT_PACKAGE}/${file} is not installed next to this function`);
    return readFileSync(path);
  };
  programs = {
    regular: read(EMBEDDED_FONT_FILES.regular),
    bold: read(EMBEDDED_FONT_FILES.bold),
    italic: read(EMBEDDED_FONT_FILES.italic),
  };
  return programs;
}

/** The standard fonts, or, given a font engine (fontkit), the embedded ones. */
export async function documentFonts(pdf: PDFDocument, fontkit?: Fontkit): Promise<DocumentFonts> {
  if (!fontkit) {
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
