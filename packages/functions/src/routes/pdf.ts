import { Hono } from "hono";
import { getInvoice } from "@invoicing/core/invoices/invoices";
import { toInvoice } from "@invoicing/core/invoices/model";
import { invoiceView } from "@invoicing/core/public/view";
import type { AppEnv } from "../env";
import { idParam } from "../params";
import { pdfResponse } from "../pdf/response";

/** GET /invoices/{id}/pdf: the owner's PDF of any of their invoices; a draft is marked DRAFT. */
export const invoicePdf = new Hono<AppEnv>().get("/invoices/:id/pdf", async (c) => {
  const invoice = await getInvoice(c.get("ctx"), idParam(c));
  return pdfResponse(c, invoiceView(toInvoice(invoice), c.get("deps")));
});
