import type { Color, PDFDocument, PDFFont, PDFImage, PDFPage, Rotation } from "pdf-lib";
import type { DocumentView, LabelledValue, PartyView } from "@invoicing/core/capabilities/document-view";
import { documentFonts, type Fontkit } from "./fonts";

/**
 * The PDF of an invoice or estimate: the same view the public page renders (core/src/invoices/view.ts, estimates/view.ts),
 * laid out on A4 pages with pdf-lib — pure JS, nothing to install in the Lambda; the fonts are in
 * fonts.ts. User text is only ever drawn as text. Both fonts cover WinAnsi's letters only, so text
 * is reduced to what they can draw (accents kept, other letters decomposed or shown as "?"). Every page repeats
 * the table header when the lines run over, and carries the page number and the seller's footer;
 * a draft carries a DRAFT watermark on every page.
 */
const PAGE: [number, number] = [595.28, 841.89];
const MARGIN = 48;
const BOTTOM = 64; // room for the footer
const WIDTH = PAGE[0] - 2 * MARGIN;
// pdf-lib itself is imported at the first PDF (renderDocumentPdf), not with this module: the
// functions that draw a PDF now and then (stream subscriber, reminders job) keep it out of their
// bundle (nodejs.install) and out of their cold start. These two build the plain values pdf-lib's
// rgb() and degrees() return, so the colours can stay module constants.
const rgb = (red: number, green: number, blue: number) => ({ type: "RGB", red, green, blue }) as unknown as Color;
const degrees = (angle: number) => ({ type: "degrees", angle }) as unknown as Rotation;
const INK = rgb(0.11, 0.11, 0.13);
const MUTED = rgb(0.38, 0.38, 0.42);
const RULE = rgb(0.85, 0.86, 0.89);
const ACCENT = rgb(0.14, 0.33, 0.84);
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

export interface PdfOptions {
  /** When the PDF was made (its metadata dates): the caller's clock. */
  now: Date;
  /** Fonts embedded with this font engine, as PDF/A requires (the Factur-X e-invoice); otherwise the standard fonts. */
  fontkit?: Fontkit;
}

export async function renderDocumentPdf(view: DocumentView, options: PdfOptions): Promise<Uint8Array> {
  const { PDFDocument } = await import("pdf-lib");
  const pdf = await PDFDocument.create({ updateMetadata: false });
  pdf.setTitle(view.title);
  pdf.setSubject(SUBJECTS[view.kind]);
  if (view.seller) pdf.setAuthor(sanitizeForMeta(view.seller.name));
  pdf.setCreator("Invoicing");
  pdf.setProducer("Invoicing (pdf-lib)");
  pdf.setCreationDate(options.now);
  pdf.setModificationDate(options.now);
  const fonts = await documentFonts(pdf, options.fontkit);
  const logo = await embedLogo(pdf, view);
  const layout = new Layout(pdf, fonts);

  header(layout, view, logo);
  parties(layout, view);
  delivery(layout, view);
  correction(layout, view);
  layout.table(view.lines);
  totals(layout, view);
  closing(layout, view);

  const pages = pdf.getPages();
  pages.forEach((page, i) => {
    if (view.draft) watermark(page, fonts.bold);
    const number = `${view.title} · Page ${i + 1} of ${pages.length}`;
    const size = 8;
    const shown = sanitize(number, fonts.regular);
    page.drawText(shown, {
      x: PAGE[0] - MARGIN - width(fonts.regular, shown, size),
      y: 30,
      size,
      font: fonts.regular,
      color: MUTED,
    });
    if (view.footer) {
      const lines = wrap(view.footer, fonts.regular, size, WIDTH - 150).slice(0, 3);
      for (const [n, line] of lines.entries()) {
        page.drawText(line, {
          x: MARGIN,
          y: 30 + (lines.length - 1 - n) * 10,
          size,
          font: fonts.regular,
          color: MUTED,
        });
      }
    }
  });
  return pdf.save();
}

async function embedLogo(pdf: PDFDocument, view: DocumentView): Promise<PDFImage | undefined> {
  if (!view.logo) return undefined;
  try {
    return view.logo.contentType === "image/png"
      ? await pdf.embedPng(view.logo.bytes)
      : await pdf.embedJpg(view.logo.bytes);
  } catch {
    return undefined; // checked at upload; an image pdf-lib still cannot read is left out, not fatal
  }
}

const SUBJECTS: Record<DocumentView["kind"], string> = {
  invoice: "Invoice",
  estimate: "Estimate",
  credit_note: "Credit note",
};
const HEADINGS: Record<DocumentView["kind"], string> = {
  invoice: "INVOICE",
  estimate: "ESTIMATE",
  credit_note: "CREDIT NOTE",
};

/** Logo (or the business name) on the left, the title, number and status on the right. */
function header(layout: Layout, view: DocumentView, logo: PDFImage | undefined): void {
  const top = layout.y;
  const { regular, bold } = layout.fonts;
  let leftBottom = top;
  if (logo) {
    const scale = Math.min(170 / logo.width, 56 / logo.height, 1);
    const w = logo.width * scale,
      h = logo.height * scale;
    layout.page.drawImage(logo, { x: MARGIN, y: top - h, width: w, height: h });
    leftBottom = top - h;
  } else if (view.seller) {
    layout.y = top;
    layout.paragraph(view.seller.name, { font: bold, size: 16, width: WIDTH / 2 });
    leftBottom = layout.y;
  }
  const title = view.draft ? `DRAFT ${HEADINGS[view.kind]}` : HEADINGS[view.kind];
  const right = (text: string, font: PDFFont, size: number, y: number, color = INK) => {
    const shown = sanitize(text, font);
    layout.page.drawText(shown, { x: PAGE[0] - MARGIN - width(font, shown, size), y, size, font, color });
  };
  right(title, bold, 22, top - 20, ACCENT);
  if (view.number) right(view.number, regular, 11, top - 36);
  right(view.statusLabel.toUpperCase(), bold, 9, top - 52, MUTED);
  layout.y = Math.min(leftBottom, top - 56) - 22;
}

/** From (the seller) and Bill to on the left and middle; the document's facts on the right. */
function parties(layout: Layout, view: DocumentView): void {
  const top = layout.y;
  const col = (WIDTH - 24) / 3;
  let bottom = top;
  if (view.seller) {
    layout.y = top;
    party(layout, "From", view.seller, 0, col);
    bottom = Math.min(bottom, layout.y);
  }
  layout.y = top;
  party(layout, "Bill to", view.billTo, view.seller ? col + 12 : 0, col);
  bottom = Math.min(bottom, layout.y);
  layout.y = top;
  layout.label("Details", 2 * col + 24);
  for (const fact of view.facts) layout.pair(fact, { x: 2 * col + 24, width: col, labelWidth: 74 });
  layout.y = Math.min(bottom, layout.y) - 18;
}

/** "Sent via Peppol to …" once delivered over Peppol, under the parties. */
function delivery(layout: Layout, view: DocumentView): void {
  if (!view.delivery) return;
  layout.paragraph(view.delivery, { size: 9.5, color: MUTED });
  layout.y -= 12;
}

/** A credit note's "Credit note for invoice INV-000001 of …" and its memo, above the lines it credits. */
function correction(layout: Layout, view: DocumentView): void {
  if (!view.reference) return;
  layout.paragraph(view.reference, { font: layout.fonts.bold, size: 11 });
  if (view.memo) {
    layout.y -= 2;
    layout.paragraph(view.memo, { size: 9.5 });
  }
  layout.y -= 12;
}

function party(layout: Layout, heading: string, p: PartyView, x: number, w: number): void {
  const { regular, bold } = layout.fonts;
  layout.label(heading, x);
  layout.paragraph(p.name, { font: bold, size: 10.5, x, width: w });
  if (p.legalName) layout.paragraph(p.legalName, { size: 9, x, width: w, color: MUTED });
  for (const line of p.addressLines) layout.paragraph(line, { font: regular, size: 9, x, width: w });
  if (p.details.length) layout.y -= 3;
  for (const d of p.details) layout.paragraph(`${d.label}: ${d.value}`, { size: 8.5, x, width: w, color: MUTED });
}

/** Subtotal, one row per tax rate, total, paid and due — right-aligned under the table. */
function totals(layout: Layout, view: DocumentView): void {
  const x = WIDTH - 260,
    w = 260;
  layout.y -= 6;
  const rows: (LabelledValue & { emphasis?: boolean; small?: boolean; ruleAbove?: boolean })[] = [];
  for (const t of view.totals) {
    if (t.label === "Tax") for (const row of view.taxRows) rows.push({ ...row, small: true });
    rows.push({ ...t, ruleAbove: t.label === "Total" });
  }
  for (const row of rows) {
    if (row.ruleAbove) {
      layout.need(20);
      layout.y -= 2;
      layout.page.drawLine({
        start: { x: MARGIN + x, y: layout.y },
        end: { x: MARGIN + WIDTH, y: layout.y },
        thickness: 0.8,
        color: INK,
      });
      layout.y -= 4;
    }
    layout.pair(row, {
      x,
      width: w,
      labelWidth: 180,
      alignValue: "right",
      bold: row.emphasis,
      size: row.emphasis ? 11 : row.small ? 9 : 10,
    });
  }
  layout.y -= 10;
  if (view.taxExemptionReason) {
    layout.paragraph(view.taxExemptionReason, { font: layout.fonts.italic, size: 9, color: MUTED });
    layout.y -= 8;
  }
}

/** Payment instructions, the pay link, notes, terms. */
function closing(layout: Layout, view: DocumentView): void {
  if (view.payment) layout.box(view.payment.heading, view.payment.rows);
  if (view.payLink) {
    layout.label("Pay online");
    layout.paragraph(view.payLink, { size: 9, color: ACCENT });
    layout.y -= 8;
  }
  for (const [heading, text] of [
    ["Notes", view.notes],
    ["Terms", view.terms],
  ] as const) {
    if (!text) continue;
    layout.label(heading);
    layout.paragraph(text, { size: 9 });
    layout.y -= 8;
  }
}

function watermark(page: PDFPage, font: PDFFont): void {
  const size = 120;
  const w = font.widthOfTextAtSize("DRAFT", size);
  // Centred on the page along the 45° diagonal.
  const cx = PAGE[0] / 2,
    cy = PAGE[1] / 2,
    d = w / 2 / Math.SQRT2;
  page.drawText("DRAFT", {
    x: cx - d + size * 0.25,
    y: cy - d - size * 0.25,
    size,
    font,
    color: rgb(0.85, 0.2, 0.2),
    opacity: 0.15,
    rotate: degrees(45),
  });
}

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

const sanitizeForMeta = (text: string): string => text.replace(/[\u0000-\u001f\u007f]/g, "");

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
function width(font: PDFFont, text: string, size: number): number {
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
class Layout {
  page: PDFPage;
  y: number;
  /** True while table rows are being drawn: a new page then starts with the table header. */
  private inTable = false;
  /** Table rows begun on the current page. */
  private rowsOnPage = 0;

  constructor(
    private readonly pdf: PDFDocument,
    readonly fonts: { regular: PDFFont; bold: PDFFont; italic: PDFFont },
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
