import { Hono, type Context } from "hono";
import { notFound } from "@invoicing/core/errors";
import { documentAssets } from "@invoicing/core/public/assets";
import { loadCreditNoteView } from "@invoicing/core/public/credit-note-view";
import { findPublicCreditNote, findPublicEstimate, findPublicInvoice } from "@invoicing/core/public/documents";
import { estimateView } from "@invoicing/core/estimates/view";
import { invoiceDocument, invoiceView } from "@invoicing/core/invoices/view";
import type { AppEnv } from "../../http/app-env";
import { describe } from "../../http/describe";
import { toPublicEstimate } from "@invoicing/core/public/estimate";
import { securityHeaders } from "./headers";
import { htmlPage } from "./page";

/**
 * The public pages: what a client opens from the email link, without an API key. The token is the
 * only key: a token of the wrong shape, an unknown one and a draft's are all the same 404 (never a
 * 400 that would tell shapes apart).
 */

const token = (c: Context<AppEnv>): string => c.req.param("token") ?? "";

export const publicPages = new Hono<AppEnv>()
  .use("/public/*", securityHeaders)
  .get(
    "/public/invoices/:token",
    describe({
      operationId: "getPublicInvoicePage",
      tag: "Public",
      summary: "The public page of an invoice",
      description: "An HTML page of a non-draft invoice (void included), with a pay button when a payment link exists.",
      success: { status: 200, description: "The page.", mediaType: "text/html" },
      problems: ["not_found"],
    }),
    async (c) => {
      const deps = c.get("deps");
      const invoice = await findPublicInvoice(deps, token(c));
      if (!invoice) throw notFound("invoice");
      const pdfHref = `/public/invoices/${encodeURIComponent(invoice.publicToken)}/pdf`;
      return htmlPage(
        c,
        invoiceView(invoiceDocument(invoice), await documentAssets(deps, invoice.userId, invoice), deps),
        pdfHref,
      );
    },
  )
  .get(
    "/public/estimates/:token",
    describe({
      operationId: "getPublicEstimatePage",
      tag: "Public",
      summary: "The public page of an estimate",
      description: "An HTML page of a non-draft estimate.",
      success: { status: 200, description: "The page.", mediaType: "text/html" },
      problems: ["not_found"],
    }),
    async (c) => {
      const deps = c.get("deps");
      const estimate = await findPublicEstimate(deps, token(c));
      if (!estimate) throw notFound("estimate");
      const view = estimateView(toPublicEstimate(estimate), await documentAssets(deps, estimate.userId, estimate));
      return htmlPage(c, view, `/public/estimates/${encodeURIComponent(estimate.publicToken)}/pdf`);
    },
  )
  .get(
    "/public/credit-notes/:token",
    describe({
      operationId: "getPublicCreditNotePage",
      tag: "Public",
      summary: "The public page of a credit note",
      description: 'An HTML page of a credit note: titled "Credit note", with the invoice it corrects and its date.',
      success: { status: 200, description: "The page.", mediaType: "text/html" },
      problems: ["not_found"],
    }),
    async (c) => {
      const deps = c.get("deps");
      const note = await findPublicCreditNote(deps, token(c));
      if (!note) throw notFound("credit note");
      const view = await loadCreditNoteView(deps, note.userId, note);
      return htmlPage(c, view, `/public/credit-notes/${encodeURIComponent(note.publicToken)}/pdf`);
    },
  );
