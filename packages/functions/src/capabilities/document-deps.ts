import type { Deps } from "@invoicing/core/context";
import { renderDocumentPdf } from "../pdf/document-pdf";

/**
 * Dependencies plus the PDF renderer, for the functions that draw documents: the PDF function, the
 * jobs (which deliver queued emails with their PDF attached) and the local server. The API
 * function does not import this module, so pdf-lib stays out of its bundle (npm run build shows
 * the sizes); an email it queues with a PDF is delivered by one of these.
 */
export const withDocumentRenderer = (deps: Deps): Deps => ({
  ...deps,
  renderPdf: (view, now) => renderDocumentPdf(view, { now }),
});
