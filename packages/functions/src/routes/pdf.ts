import { type Context, Hono } from "hono";
import * as v from "valibot";
import { invalidTransition, notFound } from "@invoicing/core/errors";
import { getEstimate } from "@invoicing/core/estimates/estimates";
import { getCreditNote } from "@invoicing/core/credit-notes/read";
import type { CreditNoteItem } from "@invoicing/core/credit-notes/model";
import { getInvoice } from "@invoicing/core/invoices/invoices";
import type { InvoiceItem } from "@invoicing/core/invoices/model";
import { documentAssets } from "@invoicing/core/public/assets";
import { peppolAddresses } from "@invoicing/core/peppol/addresses";
import { creditNoteDocument, loadCreditNoteView } from "@invoicing/core/public/credit-note-view";
import { findPublicCreditNote, findPublicEstimate, findPublicInvoice } from "@invoicing/core/public/documents";
import { creditNoteView } from "@invoicing/core/credit-notes/view";
import { estimateView } from "@invoicing/core/estimates/view";
import { invoiceDocument, invoiceView } from "@invoicing/core/invoices/view";
import type { AppEnv } from "../http/app-env";
import { eInvoiceResponse } from "../http/einvoice-response";
import { E_INVOICE_FORMATS, type EInvoiceFormat } from "../einvoice/source";
import { describe } from "../http/describe";
import { idParam } from "../http/params";
import { pdfResponse } from "../http/pdf-response";
import { toPublicEstimate } from "@invoicing/core/public/estimate";
import { queryParams } from "../http/validators";
import { securityHeaders } from "./public/headers";

const PDF = { status: 200, description: "The PDF.", mediaType: "application/pdf" } as const;
const E_INVOICE = {
  status: 200,
  description:
    "The e-invoice: `application/xml` (ubl, cii, xrechnung, peppol) or `application/pdf` (facturx), named after the invoice number.",
  mediaType: "application/xml",
} as const;
const E_INVOICE_TEXT =
  "EN 16931 e-invoice: `ubl` (UBL 2.1, the default), `cii` (UN/CEFACT CII D16B), `xrechnung` (UBL with the " +
  "XRechnung 3.0 CIUS), `facturx` (the invoice PDF as PDF/A-3 with the CII attached as factur-x.xml) or " +
  "`peppol` (Peppol BIS Billing 3.0 UBL, the parties' peppolId as electronic addresses). " +
  "Data the format needs and the invoice lacks: 422 e_invoice_incomplete naming each field (docs/e-invoices.md).";
const CREDIT_NOTE_E_INVOICE_TEXT =
  "A credit note is type code 381 (UBL: a CreditNote document; CII and Factur-X: TypeCode 381) and names the " +
  "invoice it corrects (BG-3: its number and issue date).";
const eInvoiceQuery = queryParams({ format: v.optional(v.picklist(E_INVOICE_FORMATS), "ubl") });

/**
 * The PDFs, served by the documents Lambda when deployed (lambda/documents.ts), which mounts
 * http/pdf-renderer.ts and http/einvoice-writer.ts:
 * - GET /invoices/{id}/pdf, /estimates/{id}/pdf: the owner's, any status; a draft is marked DRAFT.
 * - GET /public/invoices/{token}/pdf, /public/estimates/{token}/pdf: the client's, non-draft, no auth.
 * Every one is drawn from the same view as the public page (core/src/invoices/view.ts, estimates/view.ts, credit-notes/view.ts).
 * - GET /invoices/{id}/e-invoice and /public/invoices/{token}/e-invoice: the same invoice as an
 *   EN 16931 e-invoice (docs/e-invoices.md); a draft has none.
 * - The same four for credit notes (/credit-notes/{id}/pdf|e-invoice, /public/credit-notes/{token}/
 *   pdf|e-invoice); a credit note is issued when it is created, so each one has them all.
 */
export const pdfRoutes = new Hono<AppEnv>()
  .use("/public/*", securityHeaders)
  .get(
    "/invoices/:id/pdf",
    describe({
      operationId: "getInvoicePdf",
      tag: "Invoices",
      summary: "Download an invoice as PDF",
      description: "Any status; a draft is marked DRAFT.",
      success: PDF,
    }),
    async (c) => {
      const ctx = c.get("ctx");
      const invoice = await getInvoice(ctx, idParam(c));
      return pdfResponse(c, invoiceView(invoiceDocument(invoice), await documentAssets(ctx, ctx.userId, invoice), ctx));
    },
  )
  .get(
    "/public/invoices/:token/pdf",
    describe({
      operationId: "getPublicInvoicePdf",
      tag: "Public",
      summary: "The PDF of a non-draft invoice",
      success: PDF,
      problems: ["not_found"],
    }),
    async (c) => {
      const deps = c.get("deps");
      const invoice = await findPublicInvoice(deps, c.req.param("token") ?? "");
      if (!invoice) throw notFound("invoice");
      return pdfResponse(
        c,
        invoiceView(invoiceDocument(invoice), await documentAssets(deps, invoice.userId, invoice), deps),
      );
    },
  )
  .get(
    "/estimates/:id/pdf",
    describe({
      operationId: "getEstimatePdf",
      tag: "Estimates",
      summary: "Download an estimate as PDF",
      description: "Any status; a draft is marked DRAFT.",
      success: PDF,
    }),
    async (c) => {
      const ctx = c.get("ctx");
      const estimate = await getEstimate(ctx, idParam(c));
      const assets = await documentAssets(ctx, ctx.userId, estimate);
      return pdfResponse(c, estimateView(toPublicEstimate(estimate), assets));
    },
  )
  .get(
    "/public/estimates/:token/pdf",
    describe({
      operationId: "getPublicEstimatePdf",
      tag: "Public",
      summary: "The PDF of a non-draft estimate",
      success: PDF,
      problems: ["not_found"],
    }),
    async (c) => {
      const deps = c.get("deps");
      const estimate = await findPublicEstimate(deps, c.req.param("token") ?? "");
      if (!estimate) throw notFound("estimate");
      const assets = await documentAssets(deps, estimate.userId, estimate);
      return pdfResponse(c, estimateView(toPublicEstimate(estimate), assets));
    },
  )
  .get(
    "/invoices/:id/e-invoice",
    describe({
      operationId: "getInvoiceEInvoice",
      tag: "Invoices",
      summary: "Download an invoice as an e-invoice",
      description: `${E_INVOICE_TEXT} A draft: 422 invalid_transition.`,
      success: E_INVOICE,
      problems: ["invalid_transition", "e_invoice_incomplete"],
    }),
    eInvoiceQuery,
    async (c) => {
      const ctx = c.get("ctx");
      const invoice = await getInvoice(ctx, idParam(c));
      // A draft has no number, seller or final amounts yet: it is not an invoice to exchange.
      if (invoice.status === "draft") throw invalidTransition("invoice", "draft", "write an e-invoice of");
      return invoiceEInvoice(c, invoice, c.req.valid("query").format);
    },
  )
  .get(
    "/public/invoices/:token/e-invoice",
    describe({
      operationId: "getPublicInvoiceEInvoice",
      tag: "Public",
      summary: "The e-invoice of a non-draft invoice",
      description: E_INVOICE_TEXT,
      success: E_INVOICE,
      problems: ["not_found", "e_invoice_incomplete"],
    }),
    eInvoiceQuery,
    async (c) => {
      const invoice = await findPublicInvoice(c.get("deps"), c.req.param("token") ?? "");
      if (!invoice) throw notFound("invoice");
      return invoiceEInvoice(c, invoice, c.req.valid("query").format);
    },
  )
  .get(
    "/credit-notes/:id/pdf",
    describe({
      operationId: "getCreditNotePdf",
      tag: "Credit notes",
      summary: "Download a credit note as PDF",
      description: 'Titled "Credit note", with the invoice it corrects and its date, the reason and memo.',
      success: PDF,
    }),
    async (c) => {
      const ctx = c.get("ctx");
      const note = await getCreditNote(ctx, idParam(c));
      return pdfResponse(c, await loadCreditNoteView(ctx, ctx.userId, note));
    },
  )
  .get(
    "/public/credit-notes/:token/pdf",
    describe({
      operationId: "getPublicCreditNotePdf",
      tag: "Public",
      summary: "The PDF of a credit note",
      success: PDF,
      problems: ["not_found"],
    }),
    async (c) => {
      const deps = c.get("deps");
      const note = await findPublicCreditNote(deps, c.req.param("token") ?? "");
      if (!note) throw notFound("credit note");
      return pdfResponse(c, await loadCreditNoteView(deps, note.userId, note));
    },
  )
  .get(
    "/credit-notes/:id/e-invoice",
    describe({
      operationId: "getCreditNoteEInvoice",
      tag: "Credit notes",
      summary: "Download a credit note as an e-invoice",
      description: `${CREDIT_NOTE_E_INVOICE_TEXT} ${E_INVOICE_TEXT}`,
      success: E_INVOICE,
      problems: ["e_invoice_incomplete"],
    }),
    eInvoiceQuery,
    async (c) => {
      const ctx = c.get("ctx");
      const note = await getCreditNote(ctx, idParam(c));
      return creditNoteEInvoice(c, note, c.req.valid("query").format);
    },
  )
  .get(
    "/public/credit-notes/:token/e-invoice",
    describe({
      operationId: "getPublicCreditNoteEInvoice",
      tag: "Public",
      summary: "The e-invoice of a credit note",
      description: `${CREDIT_NOTE_E_INVOICE_TEXT} ${E_INVOICE_TEXT}`,
      success: E_INVOICE,
      problems: ["not_found", "e_invoice_incomplete"],
    }),
    eInvoiceQuery,
    async (c) => {
      const note = await findPublicCreditNote(c.get("deps"), c.req.param("token") ?? "");
      if (!note) throw notFound("credit note");
      return creditNoteEInvoice(c, note, c.req.valid("query").format);
    },
  );

/** An issued invoice's e-invoice; the Factur-X PDF is its ordinary PDF's view. */
async function invoiceEInvoice(c: Context<AppEnv>, item: InvoiceItem, format: EInvoiceFormat): Promise<Response> {
  const deps = c.get("deps");
  const invoice = invoiceDocument(item);
  const view = async () => invoiceView(invoice, await documentAssets(deps, item.userId, item), deps);
  const peppol = await peppolAddresses(deps, item.userId, item.clientId);
  return eInvoiceResponse(c, { kind: "invoice", invoice, peppol }, view, format);
}

/** A credit note's e-invoice (type 381): read with the invoice it corrects, which BG-3 names. */
async function creditNoteEInvoice(c: Context<AppEnv>, note: CreditNoteItem, format: EInvoiceFormat): Promise<Response> {
  const deps = c.get("deps");
  const [{ creditNote, invoice, assets }, peppol] = await Promise.all([
    creditNoteDocument(deps, note.userId, note),
    peppolAddresses(deps, note.userId, note.clientId),
  ]);
  const view = async () => creditNoteView(creditNote, invoice.issueDate, assets);
  return eInvoiceResponse(c, { kind: "credit_note", creditNote, invoice, peppol }, view, format);
}
