import { Hono } from "hono";
import { notFound } from "@invoicing/core/errors";
import { getInvoice } from "@invoicing/core/invoices/invoices";
import { toInvoice } from "@invoicing/core/invoices/model";
import { findPublicInvoice } from "@invoicing/core/public/documents";
import { invoiceView } from "@invoicing/core/public/view";
import type { AppEnv } from "../env";
import { describe } from "../openapi/describe";
import { idParam } from "../params";
import { pdfResponse } from "../pdf/response";
import { securityHeaders } from "./public";

const PDF = { status: 200, description: "The PDF.", mediaType: "application/pdf" } as const;

/**
 * The PDFs, served by the documents Lambda when deployed (documents-api.ts), which mounts
 * pdf/renderer.ts:
 * - GET /invoices/{id}/pdf: the owner's PDF of any of their invoices; a draft is marked DRAFT.
 * - GET /public/invoices/{token}/pdf: the client's, for a non-draft invoice, no auth.
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
  );
