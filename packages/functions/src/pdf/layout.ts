import type { Color, PDFDocument, PDFFont, PDFPage, Rotation } from "pdf-lib";
import type { DocumentView, LabelledValue } from "@invoicing/core/capabilities/document-view";
import type { DocumentFonts } from "./fonts";

/**
 * The layout engine the document PDF is drawn with (document-pdf.ts draws the sections): A4 pages
 * and their margins, the colours, text made drawable by the font (sanitize), measured (width) and
 * wrapped (wrap), and a cursor (Layout) that moves down the page and starts the next one when the
 * page is full, repeating the line-item table's header when the table runs over.
 */
export const PAGE: [number, number] = [595.28, 841.89];
export const MARGIN = 48;
const BOTTOM = 64; // room for the footer
export const WIDTH = PAGE[0] - 2 * MARGIN;
// pdf-lib is imported at the first PDF (document-pdf.ts), never by this module, which takes only
// its types. These two build the plain values pdf-lib's rgb() and degrees() return, so the colours
// can stay module constants.
export const rgb = (red: number, green: number, blue: number) =>
  ({ type: "RGB", red, green, blue }) as unknown as Color;
export const degrees = (angle: number) => ({ type: "degrees", angle }) as unknown as Rotation;
export const INK = rgb(0.11, 0.11, 0.13);
export const MUTED = rgb(0.38, 0.38, 0.42);
const RULE = rgb(0.85, 0.86, 0.89);
export const ACCENT = rgb(0.14, 0.33, 0.84);
const SHADE = rgb(0.95, 0.96, 0.98);
const PAY_SHADE = rgb(0.93, 0.95, 1);

/** Table columns: x offset from the margin, width, alignment. */
const COLUMNS = [
  { key: "description", title: "Description", x: 8, width: 212, align: "left" },
  { key: "quantity", title: "Qty", x: 226, width: 40, align: "right" },
  { key: "unitPrice", title: "Unit price", x: 270, width: 86, align: "right" },
  { key: "taxRate", title: "Tax", x: 360, width: 40, align: "right" },
  { key: "amount", title: "Amount", x: 404, width: WIDTH - 412, align: "right" },
] as const;

/** Text the font can draw: every character it has, the rest decomposed or "?". */
export function sanitize(text: string, font: PDFFont): string {
  const supported = charsetOf(font);
  const out: string[] = [];
  for (const char of text.replace(/\t/g, " ").replace(/[\u0000-\u001f\u007f]/g, "")) {
    if (supported.has(char.codePointAt(0)!)) {
      out.push(char);
      continue;
    }
    const base = char.normalize("NFKD").replace(/[\u0300-\u036f]/g, "");
    out.push([...base].every((c) => supported.has(c.codePointAt(0)!)) && base ? base : "?");
  }
  return out.join("");
}

const charsets = new WeakMap<PDFFont, Set<number>>();
function charsetOf(font: PDFFont): Set<number> {
  let set = charsets.get(font);
  if (!set) charsets.set(font, (set = new Set(font.getCharacterSet())));
  return set;
}

/**
 * Text width from per-character advance widths, each character measured once per font and cached.
 * Neither font is kerned nor ligated (fonts.ts), so the sum is exactly pdf-lib's width of the whole string,
 * and measuring is linear in the text's length whatever the text is.
 */
const advances = new WeakMap<PDFFont, Map<string, number>>();
export function width(font: PDFFont, text: string, size: number): number {
  let cache = advances.get(font);
  if (!cache) advances.set(font, (cache = new Map()));
  let total = 0;
  for (const char of text) {
    let w = cache.get(char);
    if (w === undefined) cache.set(char, (w = font.widthOfTextAtSize(char, 1000)));
    total += w;
  }
  return (total * size) / 1000;
}

/**
 * Splits text into lines that fit `maxWidth`, keeping its own line breaks. Each word is measured
 * once; a word wider than the line is cut where its running width reaches the edge (one pass over
 * its characters), so wrapping is linear in the text's length — a 1000-character word without a
 * space costs 1000 additions, not a million measurements.
 */
export function wrap(text: string, font: PDFFont, size: number, maxWidth: number): string[] {
  const lines: string[] = [];
  const space = width(font, " ", size);
  for (const paragraph of text.replace(/\r\n?/g, "\n").split("\n")) {
    let line = "";
    let lineWidth = 0;
    for (const word of sanitize(paragraph, font).split(/ +/)) {
      const w = width(font, word, size);
      if (line && lineWidth + space + w <= maxWidth) {
        line += ` ${word}`;
        lineWidth += space + w;
        continue;
      }
      if (line) lines.push(line);
      if (w <= maxWidth) {
        line = word;
        lineWidth = w;
        continue;
      }
      // Cut the long word by running width: each character is added once.
      line = "";
      lineWidth = 0;
      for (const char of word) {
        const cw = width(font, char, size);
        if (line && lineWidth + cw > maxWidth) {
          lines.push(line);
          line = "";
          lineWidth = 0;
        }
        line += char;
        lineWidth += cw;
      }
    }
    lines.push(line);
  }
  return lines;
}
interface TextOptions {
  font?: PDFFont;
  size?: number;
  color?: ReturnType<typeof rgb>;
  x?: number;
  width?: number;
}

/** A top-down cursor over pages: each draw moves down, a full page starts the next one. */
export class Layout {
  page: PDFPage;
  y: number;
  /** True while table rows are being drawn: a new page then starts with the table header. */
  private inTable = false;
  /** Table rows begun on the current page. */
  private rowsOnPage = 0;

  constructor(
    private readonly pdf: PDFDocument,
    readonly fonts: DocumentFonts,
  ) {
    this.page = pdf.addPage(PAGE);
    this.y = PAGE[1] - MARGIN;
  }

  /** Room for `height` more points, else a new page (with the table header when in the table). */
  need(height: number): boolean {
    if (this.y - height >= BOTTOM) return false;
    this.newPage();
    return true;
  }

  newPage(): void {
    this.page = this.pdf.addPage(PAGE);
    this.y = PAGE[1] - MARGIN;
    if (this.inTable) this.tableHeader();
  }

  /** One line of text at the cursor (already fitting). */
  line(text: string, o: TextOptions = {}): void {
    const font = o.font ?? this.fonts.regular,
      size = o.size ?? 10;
    this.need(size * 1.35);
    this.y -= size;
    this.page.drawText(text, { x: MARGIN + (o.x ?? 0), y: this.y, size, font, color: o.color ?? INK });
    this.y -= size * 0.35;
  }

  paragraph(text: string, o: TextOptions = {}): void {
    const font = o.font ?? this.fonts.regular,
      size = o.size ?? 10;
    for (const l of wrap(text, font, size, o.width ?? WIDTH - (o.x ?? 0))) this.line(l, { ...o, font, size });
  }

  /** A small uppercase section label. */
  label(text: string, x = 0): void {
    this.line(sanitize(text.toUpperCase(), this.fonts.bold), { font: this.fonts.bold, size: 7.5, x, color: MUTED });
    this.y -= 2;
  }

  /** `label … value` within a column; long labels and values wrap inside their part. */
  pair(
    item: LabelledValue,
    o: { x: number; width: number; labelWidth: number; alignValue?: "right"; bold?: boolean; size?: number },
  ): void {
    const size = o.size ?? 9;
    const labelFont = o.bold ? this.fonts.bold : this.fonts.regular;
    const valueFont = o.bold ? this.fonts.bold : this.fonts.regular;
    const labels = wrap(item.label, labelFont, size, o.labelWidth - 6);
    const valueWidth = o.width - o.labelWidth;
    const values = wrap(item.value, valueFont, size, valueWidth);
    const rows = Math.max(labels.length, values.length);
    const leading = size * 1.3;
    this.need(rows * leading + 3);
    const top = this.y;
    for (let i = 0; i < rows; i++) {
      const y = top - size - i * leading;
      const l = labels[i];
      if (l) this.page.drawText(l, { x: MARGIN + o.x, y, size, font: labelFont, color: o.bold ? INK : MUTED });
      const v = values[i];
      if (v) {
        const vx =
          o.alignValue === "right" ? MARGIN + o.x + o.width - width(valueFont, v, size) : MARGIN + o.x + o.labelWidth;
        this.page.drawText(v, { x: vx, y, size, font: valueFont, color: INK });
      }
    }
    this.y = top - rows * leading - 3;
  }

  /** A shaded box with a heading and label/value rows (the payment instructions). */
  box(heading: string, rows: LabelledValue[]): void {
    const size = 9,
      leading = size * 1.3,
      pad = 12;
    const labelWidth = 100;
    const valueRows = rows.map((r) => wrap(r.value, this.fonts.regular, size, WIDTH - 2 * pad - labelWidth).length);
    const height = pad + 12 + valueRows.reduce((a, b) => a + b, 0) * leading + rows.length * 3 + pad - 4;
    this.need(Math.min(height, PAGE[1] - MARGIN - BOTTOM) + 10);
    this.page.drawRectangle({
      x: MARGIN,
      y: this.y - height,
      width: WIDTH,
      height,
      color: PAY_SHADE,
      borderColor: ACCENT,
      borderWidth: 0.6,
    });
    this.y -= pad - 2;
    this.line(sanitize(heading, this.fonts.bold), { font: this.fonts.bold, size: 10, x: pad, color: ACCENT });
    this.y -= 2;
    for (const row of rows) this.pair(row, { x: pad, width: WIDTH - 2 * pad, labelWidth });
    this.y -= pad;
  }

  table(lines: DocumentView["lines"]): void {
    this.tableHeader();
    this.inTable = true;
    for (const line of lines) this.tableRow(line);
    this.inTable = false;
    if (lines.length === 0) this.line("No line items.", { size: 9, color: MUTED, x: 8 });
    this.y -= 4;
  }

  private tableHeader(): void {
    const size = 8;
    if (this.y - 40 < BOTTOM) {
      this.page = this.pdf.addPage(PAGE);
      this.y = PAGE[1] - MARGIN;
    }
    this.rowsOnPage = 0;
    this.page.drawRectangle({ x: MARGIN, y: this.y - 20, width: WIDTH, height: 20, color: SHADE });
    this.y -= 13;
    for (const col of COLUMNS) this.cell(col, col.title.toUpperCase(), this.fonts.bold, size, MUTED);
    this.y -= 13;
  }

  private tableRow(line: DocumentView["lines"][number]): void {
    const size = 9.5,
      leading = size * 1.3;
    const description = wrap(line.description, this.fonts.regular, size, COLUMNS[0].width);
    // A row that fits on a page stays whole; a taller one runs on over pages (header repeated).
    // (Under a header with no row yet, moving on would leave the header alone: split there.)
    const whole = description.length * leading + 10;
    this.need(whole <= PAGE[1] - MARGIN - BOTTOM - 40 && this.rowsOnPage > 0 ? whole : 3 * leading + 10);
    this.rowsOnPage++;
    let start = 0;
    do {
      const fit = Math.max(1, Math.floor((this.y - BOTTOM - 10) / leading));
      const chunk = description.slice(start, start + fit);
      const top = this.y - 6;
      // One text object for the cell's lines: pdf-lib's cost is per drawText call, not per line.
      this.page.drawText(chunk.join("\n"), {
        x: MARGIN + COLUMNS[0].x,
        y: top - size,
        size,
        lineHeight: leading,
        font: this.fonts.regular,
        color: INK,
      });
      if (start === 0) {
        this.y = top - size;
        for (const col of COLUMNS.slice(1)) this.cell(col, line[col.key], this.fonts.regular, size, INK);
      }
      this.y = top - Math.max(chunk.length, 1) * leading - 4;
      start += Math.max(chunk.length, 1);
      if (start < description.length) this.newPage();
    } while (start < description.length);
    this.page.drawLine({
      start: { x: MARGIN, y: this.y },
      end: { x: MARGIN + WIDTH, y: this.y },
      thickness: 0.5,
      color: RULE,
    });
  }

  private cell(
    col: (typeof COLUMNS)[number],
    value: string,
    font: PDFFont,
    size: number,
    color: ReturnType<typeof rgb>,
  ): void {
    const shown = sanitize(value, font);
    const x = MARGIN + col.x + (col.align === "right" ? col.width - width(font, shown, size) : 0);
    this.page.drawText(shown, { x, y: this.y, size, font, color });
  }
}
