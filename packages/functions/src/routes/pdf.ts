import { Hono } from "hono";
import * as v from "valibot";
import { invalidTransition, notFound } from "@invoicing/core/errors";
import { getInvoice } from "@invoicing/core/invoices/invoices";
import { toInvoice } from "@invoicing/core/invoices/model";
import { findPublicInvoice } from "@invoicing/core/public/documents";
import { invoiceView } from "@invoicing/core/public/view";
import type { AppEnv } from "../env";
import { eInvoiceResponse } from "../einvoice/response";
import { E_INVOICE_FORMATS } from "../einvoice/source";
import { describe } from "../openapi/describe";
import { idParam } from "../params";
import { pdfResponse } from "../pdf/response";
import { queryParams } from "../validators";
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
 * The PDFs, served by their own Lambda when deployed (pdf-api.ts), which mounts pdf/renderer.ts:
 * - GET /invoices/{id}/pdf: the owner's PDF of any of their invoices; a draft is marked DRAFT.
 * - GET /public/invoices/{token}/pdf: the client's, for a non-draft invoice, no auth.
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
      const invoice = await getInvoice(c.get("ctx"), idParam(c));
      return pdfResponse(c, invoiceView(toInvoice(invoice), c.get("deps")));
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
      const invoice = await findPublicInvoice(c.get("deps"), c.req.param("token") ?? "");
      if (!invoice) throw notFound("invoice");
      return pdfResponse(c, invoiceView(toInvoice(invoice), c.get("deps")));
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
      const invoice = await getInvoice(c.get("ctx"), idParam(c));
      // A draft has no number, seller or final amounts yet: it is not an invoice to exchange.
      if (invoice.status === "draft") throw invalidTransition("invoice", "draft", "write an e-invoice of");
      return eInvoiceResponse(c, toInvoice(invoice), c.req.valid("query").format);
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
      return eInvoiceResponse(c, toInvoice(invoice), c.req.valid("query").format);
    },
  );
