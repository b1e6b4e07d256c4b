import { Hono } from "hono";
import { notFound } from "@invoicing/core/errors";
import { getEstimate } from "@invoicing/core/estimates/estimates";
import { getInvoice } from "@invoicing/core/invoices/invoices";
import { toInvoice } from "@invoicing/core/invoices/model";
import { documentAssets } from "@invoicing/core/public/assets";
import { findPublicEstimate, findPublicInvoice } from "@invoicing/core/public/documents";
import { estimateView, invoiceView } from "@invoicing/core/public/view";
import type { AppEnv } from "../env";
import { idParam } from "../params";
import { pdfResponse } from "../pdf/response";
import { toPublicEstimate } from "../public-estimate";
import { securityHeaders } from "./public";

/**
 * The PDFs (API.md section 9), served by their own Lambda when deployed (pdf-api.ts):
 * - GET /invoices/{id}/pdf, /estimates/{id}/pdf: the owner's, any status; a draft is marked DRAFT.
 * - GET /public/invoices/{token}/pdf, /public/estimates/{token}/pdf: the client's, non-draft, no auth.
 * Every one is drawn from the same view as the public page (core/src/public/view.ts).
 */
export const pdfRoutes = new Hono<AppEnv>()
  .use("/public/*", securityHeaders)
  .get("/invoices/:id/pdf", async (c) => {
    const ctx = c.get("ctx");
    const invoice = await getInvoice(ctx, idParam(c));
    return pdfResponse(c, invoiceView(toInvoice(invoice), await documentAssets(ctx, ctx.userId, invoice), ctx));
  })
  .get("/public/invoices/:token/pdf", async (c) => {
    const deps = c.get("deps");
    const invoice = await findPublicInvoice(deps, c.req.param("token") ?? "");
    if (!invoice) throw notFound("invoice");
    return pdfResponse(c, invoiceView(toInvoice(invoice), await documentAssets(deps, invoice.userId, invoice), deps));
  })
  .get("/estimates/:id/pdf", async (c) => {
    const ctx = c.get("ctx");
    const estimate = await getEstimate(ctx, idParam(c));
    return pdfResponse(c, estimateView(toPublicEstimate(estimate), await documentAssets(ctx, ctx.userId, estimate)));
  })
  .get("/public/estimates/:token/pdf", async (c) => {
    const deps = c.get("deps");
    const estimate = await findPublicEstimate(deps, c.req.param("token") ?? "");
    if (!estimate) throw notFound("estimate");
    return pdfResponse(c, estimateView(toPublicEstimate(estimate), await documentAssets(deps, estimate.userId, estimate)));
  });
