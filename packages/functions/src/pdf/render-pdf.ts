import type { DocumentView } from "@invoicing/core/capabilities/document-view";
import type { PdfOptions } from "./document-pdf";

/** Draws a document view as PDF bytes. */
export type RenderPdf = (view: DocumentView, options: RenderOptions) => Promise<Uint8Array>;
interface RenderOptions extends Omit<PdfOptions, "fontkit"> {
  /** Fonts embedded, as PDF/A requires (the Factur-X e-invoice). */
  archival?: boolean;
}
