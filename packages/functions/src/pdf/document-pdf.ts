import { PDFDocument, StandardFonts, degrees, rgb, type PDFFont, type PDFPage } from "pdf-lib";
import type { DocumentView } from "@invoicing/core/public/view";

/**
 * The PDF of an invoice or estimate: the same view the public page renders (core/src/public/view.ts),
 * laid out on A4 pages with pdf-lib's standard fonts — pure JS, nothing to install in the Lambda.
 * User text is only ever drawn as text. Standard fonts speak WinAnsi only, so text is reduced to
 * what they can draw (accents kept, other letters decomposed or shown as "?"). A draft carries a
 * DRAFT watermark on every page.
 */
const PAGE: [number, number] = [595.28, 841.89];
const MARGIN = 50;
const WIDTH = PAGE[0] - 2 * MARGIN;
const GREY = rgb(0.4, 0.4, 0.4);
const INK = rgb(0.1, 0.1, 0.12);
const RULE = rgb(0.8, 0.8, 0.82);

/** Table columns: x offset from the margin, width, alignment. */
const COLUMNS = [
  { key: "description", title: "Description", x: 0, width: 215, align: "left" },
  { key: "quantity", title: "Qty", x: 220, width: 45, align: "right" },
  { key: "unitPrice", title: "Unit price", x: 270, width: 85, align: "right" },
  { key: "taxRate", title: "Tax", x: 360, width: 50, align: "right" },
  { key: "amount", title: "Amount", x: 410, width: WIDTH - 410, align: "right" },
] as const;

export interface PdfOptions {
  /** When the PDF was made (its metadata dates): the caller's clock. */
  now: Date;
}

export async function renderDocumentPdf(view: DocumentView, options: PdfOptions): Promise<Uint8Array> {
  const pdf = await PDFDocument.create({ updateMetadata: false });
  pdf.setTitle(view.title);
  pdf.setSubject(view.kind === "invoice" ? "Invoice" : "Estimate");
  pdf.setCreator("Invoicing");
  pdf.setProducer("Invoicing (pdf-lib)");
  pdf.setCreationDate(options.now);
  pdf.setModificationDate(options.now);
  const regular = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  const layout = new Layout(pdf, regular, bold);

  // Heading: title and status.
  layout.text(view.title, { font: bold, size: 22 });
  layout.text(`Status: ${view.statusLabel}`, { size: 11, color: GREY, gapAfter: 14 });

  // Parties and dates, side by side.
  const top = layout.y;
  layout.text("Billed to", { font: bold, size: 10, color: GREY });
  layout.paragraph(view.billedTo.name, { size: 11, width: WIDTH / 2 - 10 });
  if (view.billedTo.email) layout.paragraph(view.billedTo.email, { size: 10, width: WIDTH / 2 - 10, color: GREY });
  const leftBottom = layout.y;
  layout.y = top;
  for (const date of view.dates) {
    layout.pair(date.label, date.value, { x: WIDTH / 2 + 10, width: WIDTH / 2 - 10 });
  }
  layout.y = Math.min(leftBottom, layout.y) - 16;

  // Lines.
  layout.tableHeader();
  for (const line of view.lines) layout.tableRow(line);
  if (view.lines.length === 0) layout.text("No line items.", { size: 10, color: GREY });
  layout.y -= 8;

  // Totals, right-aligned.
  for (const total of view.totals) {
    layout.pair(total.label, total.value, { x: WIDTH / 2, width: WIDTH / 2, bold: total.emphasis, alignValue: "right" });
  }
  layout.y -= 10;

  if (view.payLink) {
    layout.text("Pay online", { font: bold, size: 10, color: GREY });
    layout.paragraph(view.payLink, { size: 10 });
    layout.y -= 6;
  }
  if (view.notes) {
    layout.text("Notes", { font: bold, size: 10, color: GREY });
    layout.paragraph(view.notes, { size: 10 });
    layout.y -= 6;
  }
  if (view.terms) {
    layout.text("Terms", { font: bold, size: 10, color: GREY });
    layout.paragraph(view.terms, { size: 10 });
  }

  const pages = pdf.getPages();
  pages.forEach((page, i) => {
    if (view.draft) watermark(page, bold);
    const footer = `${sanitize(view.title, regular)} · page ${i + 1} of ${pages.length}`;
    page.drawText(sanitize(footer, regular), { x: MARGIN, y: MARGIN / 2, size: 8, font: regular, color: GREY });
  });
  return pdf.save();
}

function watermark(page: PDFPage, font: PDFFont): void {
  const size = 120;
  const width = font.widthOfTextAtSize("DRAFT", size);
  // Centred on the page along the 45° diagonal.
  const cx = PAGE[0] / 2, cy = PAGE[1] / 2, d = width / 2 / Math.SQRT2;
  page.drawText("DRAFT", { x: cx - d + size * 0.25, y: cy - d - size * 0.25, size, font, color: rgb(0.85, 0.2, 0.2), opacity: 0.18, rotate: degrees(45) });
}

/** Text the standard fonts can draw: every character WinAnsi has, the rest decomposed or "?". */
export function sanitize(text: string, font: PDFFont): string {
  const supported = charsetOf(font);
  let out = "";
  for (const char of text.replace(/\t/g, " ").replace(/[\u0000-\u001f\u007f]/g, "")) {
    if (supported.has(char.codePointAt(0)!)) {
      out += char;
      continue;
    }
    const base = char.normalize("NFKD").replace(/[\u0300-\u036f]/g, "");
    out += [...base].every((c) => supported.has(c.codePointAt(0)!)) && base ? base : "?";
  }
  return out;
}

const charsets = new WeakMap<PDFFont, Set<number>>();
function charsetOf(font: PDFFont): Set<number> {
  let set = charsets.get(font);
  if (!set) charsets.set(font, (set = new Set(font.getCharacterSet())));
  return set;
}

/** Splits text into lines that fit `width`, keeping its own line breaks; long words are cut. */
export function wrap(text: string, font: PDFFont, size: number, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.replace(/\r\n?/g, "\n").split("\n")) {
    let current = "";
    for (const word of sanitize(paragraph, font).split(/ +/)) {
      const candidate = current ? `${current} ${word}` : word;
      if (font.widthOfTextAtSize(candidate, size) <= width) {
        current = candidate;
        continue;
      }
      if (current) lines.push(current);
      current = "";
      let rest = word;
      while (font.widthOfTextAtSize(rest, size) > width) {
        let cut = rest.length - 1;
        while (cut > 1 && font.widthOfTextAtSize(rest.slice(0, cut), size) > width) cut--;
        lines.push(rest.slice(0, cut));
        rest = rest.slice(cut);
      }
      current = rest;
    }
    lines.push(current);
  }
  return lines;
}

interface TextOptions {
  font?: PDFFont;
  size?: number;
  color?: ReturnType<typeof rgb>;
  x?: number;
  width?: number;
  gapAfter?: number;
}

/** A top-down cursor over pages: each draw moves down, a full page starts the next one. */
class Layout {
  page: PDFPage;
  y: number;

  constructor(
    private readonly pdf: PDFDocument,
    private readonly regular: PDFFont,
    private readonly bold: PDFFont,
  ) {
    this.page = pdf.addPage(PAGE);
    this.y = PAGE[1] - MARGIN;
  }

  /** Room for `height` more points, else a new page. Returns true when a page was started. */
  need(height: number): boolean {
    if (this.y - height >= MARGIN) return false;
    this.page = this.pdf.addPage(PAGE);
    this.y = PAGE[1] - MARGIN;
    return true;
  }

  text(text: string, o: TextOptions = {}): void {
    const font = o.font ?? this.regular, size = o.size ?? 10;
    this.need(size * 1.3);
    this.y -= size;
    this.page.drawText(sanitize(text, font), { x: MARGIN + (o.x ?? 0), y: this.y, size, font, color: o.color ?? INK });
    this.y -= size * 0.35 + (o.gapAfter ?? 0);
  }

  paragraph(text: string, o: TextOptions = {}): void {
    const font = o.font ?? this.regular, size = o.size ?? 10;
    for (const line of wrap(text, font, size, o.width ?? WIDTH)) this.text(line, { ...o, font, size });
  }

  /** `label ……… value` within a column. */
  pair(label: string, value: string, o: { x: number; width: number; bold?: boolean; alignValue?: "right" }): void {
    const size = 10, font = o.bold ? this.bold : this.regular;
    this.need(size * 1.5);
    this.y -= size;
    this.page.drawText(sanitize(label, font), { x: MARGIN + o.x, y: this.y, size, font, color: o.bold ? INK : GREY });
    const shown = sanitize(value, font);
    const w = font.widthOfTextAtSize(shown, size);
    this.page.drawText(shown, { x: MARGIN + o.x + o.width - w, y: this.y, size, font, color: INK });
    this.y -= size * 0.6;
  }

  tableHeader(): void {
    const size = 9;
    this.need(size * 3);
    this.y -= size;
    for (const col of COLUMNS) this.cell(col, col.title, this.bold, size, GREY);
    this.y -= 5;
    this.page.drawLine({ start: { x: MARGIN, y: this.y }, end: { x: MARGIN + WIDTH, y: this.y }, thickness: 0.7, color: RULE });
    this.y -= 4;
  }

  tableRow(line: DocumentView["lines"][number]): void {
    const size = 10, leading = size * 1.3;
    const description = wrap(line.description, this.regular, size, COLUMNS[0].width);
    if (this.need(description.length * leading + 6)) this.tableHeader();
    const rowTop = this.y;
    description.forEach((text, i) => {
      this.y = rowTop - size - i * leading;
      this.page.drawText(text, { x: MARGIN, y: this.y, size, font: this.regular, color: INK });
    });
    this.y = rowTop - size;
    for (const col of COLUMNS.slice(1)) this.cell(col, line[col.key], this.regular, size, INK);
    this.y = rowTop - description.length * leading - 4;
    this.page.drawLine({ start: { x: MARGIN, y: this.y }, end: { x: MARGIN + WIDTH, y: this.y }, thickness: 0.4, color: RULE });
    this.y -= 4;
  }

  private cell(col: (typeof COLUMNS)[number], value: string, font: PDFFont, size: number, color: ReturnType<typeof rgb>): void {
    const shown = sanitize(value, font);
    const w = font.widthOfTextAtSize(shown, size);
    const x = MARGIN + col.x + (col.align === "right" ? col.width - w : 0);
    this.page.drawText(shown, { x, y: this.y, size, font, color });
  }
}
