import { Hono } from "hono";
import { notFound } from "@invoicing/core/errors";
import { getEstimate } from "@invoicing/core/estimates/estimates";
import { getInvoice } from "@invoicing/core/invoices/invoices";
import { toInvoice } from "@invoicing/core/invoices/model";
import { documentAssets } from "@invoicing/core/public/assets";
import { findPublicEstimate, findPublicInvoice } from "@invoicing/core/public/documents";
import { estimateView, invoiceView } from "@invoicing/core/public/view";
import type { AppEnv } from "../env";
import { describe } from "../openapi/describe";
import { idParam } from "../params";
import { pdfResponse } from "../pdf/response";
import { toPublicEstimate } from "../public-estimate";
import { securityHeaders } from "./public";

const PDF = { status: 200, description: "The PDF.", mediaType: "application/pdf" } as const;

/**
 * The PDFs, served by their own Lambda when deployed (pdf-api.ts), which mounts pdf/renderer.ts:
 * - GET /invoices/{id}/pdf, /estimates/{id}/pdf: the owner's, any status; a draft is marked DRAFT.
 * - GET /public/invoices/{token}/pdf, /public/estimates/{token}/pdf: the client's, non-draft, no auth.
 * Every one is drawn from the same view as the public page (core/src/public/view.ts).
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
  );
