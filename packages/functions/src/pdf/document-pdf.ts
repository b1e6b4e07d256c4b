import type { PDFDocument, PDFFont, PDFImage, PDFPage } from "pdf-lib";
import type { DocumentView, PartyView, LabelledValue } from "@invoicing/core/capabilities/document-view";
import { documentFonts, type Fontkit } from "./fonts";
import { ACCENT, INK, Layout, MARGIN, MUTED, PAGE, WIDTH, degrees, rgb, sanitize, width, wrap } from "./layout";

/**
 * The PDF of an invoice, estimate or credit note: the same view the public page renders (core/src/invoices/view.ts, estimates/view.ts),
 * laid out on A4 pages with pdf-lib — pure JS, nothing to install in the Lambda; the page, text and
 * table mechanics are in layout.ts, the fonts in fonts.ts. User text is only ever drawn as text. Both fonts cover WinAnsi's letters only, so text
 * is reduced to what they can draw (accents kept, other letters decomposed or shown as "?"). Every page repeats
 * the table header when the lines run over, and carries the page number and the seller's footer;
 * a draft carries a DRAFT watermark on every page.
 * pdf-lib itself is imported at the first PDF (renderDocumentPdf), not with this module: the
 * functions that draw a PDF now and then (the outbox worker) keep it out of their bundle
 * (nodejs.install) and out of their cold start.
 */
export interface PdfOptions {
  /** When the PDF was made (its metadata dates): the caller's clock. */
  now: Date;
  /** Fonts embedded with this font engine, as PDF/A requires (the Factur-X e-invoice); otherwise the standard fonts. */
  fontkit?: Fontkit;
}

/** renderDocumentPdf as the apps that serve PDFs call it (http/pdf-renderer.ts gives the font engine). */
export type RenderPdf = (view: DocumentView, options: RenderOptions) => Promise<Uint8Array>;
interface RenderOptions extends Omit<PdfOptions, "fontkit"> {
  /** Fonts embedded, as PDF/A requires (the Factur-X e-invoice). */
  archival?: boolean;
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

const sanitizeForMeta = (text: string): string => text.replace(/[\u0000-\u001f\u007f]/g, "");
