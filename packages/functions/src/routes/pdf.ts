import { Hono } from "hono";
import * as v from "valibot";
import { invalidTransition, notFound } from "@invoicing/core/errors";
import { getEstimate } from "@invoicing/core/estimates/estimates";
import { getInvoice } from "@invoicing/core/invoices/invoices";
import { toInvoice } from "@invoicing/core/invoices/model";
import { documentAssets } from "@invoicing/core/public/assets";
import { findPublicEstimate, findPublicInvoice } from "@invoicing/core/public/documents";
import { estimateView, invoiceView } from "@invoicing/core/public/view";
import type { AppEnv } from "../http/env";
import { eInvoiceResponse } from "../einvoice/response";
import { E_INVOICE_FORMATS } from "../einvoice/source";
import { describe } from "../openapi/describe";
import { idParam } from "../http/params";
import { pdfResponse } from "../pdf/response";
import { toPublicEstimate } from "@invoicing/core/public/estimate";
import { queryParams } from "../http/validators";
import { securityHeaders } from "./public/headers";

const PDF = { status: 200, description: "The PDF.", mediaType: "application/pdf" } as const;
const E_INVOICE = {
  status: 200,
  description:
    "The e-invoice: `application/xml` (ubl, cii, xrechnung) or `application/pdf` (facturx), named after the invoice number.",
  mediaType: "application/xml",
} as const;
const E_INVOICE_TEXT =
  "EN 16931 e-invoice: `ubl` (UBL 2.1, the default), `cii` (UN/CEFACT CII D16B), `xrechnung` (UBL with the " +
  "XRechnung 3.0 CIUS) or `facturx` (the invoice PDF as PDF/A-3 with the CII attached as factur-x.xml). " +
  "Data the format needs and the invoice lacks: 422 e_invoice_incomplete naming each field (docs/e-invoices.md).";
const eInvoiceQuery = queryParams({ format: v.optional(v.picklist(E_INVOICE_FORMATS), "ubl") });

/**
 * The PDFs, served by the documents Lambda when deployed (lambda/documents.ts), which mounts
 * pdf/renderer.ts and einvoice/writer.ts:
 * - GET /invoices/{id}/pdf, /estimates/{id}/pdf: the owner's, any status; a draft is marked DRAFT.
 * - GET /public/invoices/{token}/pdf, /public/estimates/{token}/pdf: the client's, non-draft, no auth.
 * Every one is drawn from the same view as the public page (core/src/public/view.ts).
 * - GET /invoices/{id}/e-invoice and /public/invoices/{token}/e-invoice: the same invoice as an
 *   EN 16931 e-invoice (docs/e-invoices.md); a draft has none.
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
      return pdfResponse(c, invoiceView(toInvoice(invoice), await documentAssets(ctx, ctx.userId, invoice), ctx));
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
      return pdfResponse(c, invoiceView(toInvoice(invoice), await documentAssets(deps, invoice.userId, invoice), deps));
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
      return eInvoiceResponse(c, toInvoice(invoice), ctx.userId, c.req.valid("query").format);
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
      return eInvoiceResponse(c, toInvoice(invoice), invoice.userId, c.req.valid("query").format);
    },
  );
