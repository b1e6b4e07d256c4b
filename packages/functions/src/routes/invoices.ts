import { Hono, type Context } from "hono";
import { etagOf } from "@invoicing/core/db/versioning";
import { createInvoice, deleteInvoice, getInvoice, listInvoices, updateInvoice } from "@invoicing/core/invoices/invoices";
import { finalizeInvoice, sendInvoice, voidInvoice } from "@invoicing/core/invoices/lifecycle";
import { markInvoicePaid } from "@invoicing/core/payments/payments";
import { toInvoice, type InvoiceItem } from "@invoicing/core/invoices/model";
import { readJson } from "../body";
import type { AppEnv } from "../env";
import { listQuery, pageResponse } from "../pagination";
import { idAndBody, idParam, ifMatch } from "../params";
import { emptyBody } from "../schemas/common";
import { createInvoiceBody, invoiceListFilters, markPaidBody, sendBody, updateInvoiceBody } from "../schemas/invoices";
import { validate } from "../validation";

/** An invoice response: the whole resource with its ETag. */
export function invoiceResponse(c: Context<AppEnv>, item: InvoiceItem, status: 200 | 201 = 200): Response {
  const headers: Record<string, string> = { ETag: etagOf(item.version) };
  if (status === 201) headers.Location = `/invoices/${item.id}`;
  return c.json(toInvoice(item), status, headers);
}

export const invoices = new Hono<AppEnv>()
  .post("/invoices", async (c) => {
    const body = validate(createInvoiceBody, await readJson(c));
    return invoiceResponse(c, await createInvoice(c.get("ctx"), body), 201);
  })
  .get("/invoices", async (c) => {
    const { page, query } = listQuery(c, invoiceListFilters);
    const result = await listInvoices(c.get("ctx"), { status: query.status, clientId: query.clientId }, page);
    return pageResponse(c, result, page, toInvoice);
  })
  .get("/invoices/:id", async (c) => invoiceResponse(c, await getInvoice(c.get("ctx"), idParam(c))))
  .patch("/invoices/:id", async (c) => {
    const { id, body } = await idAndBody(c, updateInvoiceBody);
    return invoiceResponse(c, await updateInvoice(c.get("ctx"), id, body, ifMatch(c)));
  })
  .delete("/invoices/:id", async (c) => {
    await deleteInvoice(c.get("ctx"), idParam(c));
    return c.body(null, 204);
  })
  .post("/invoices/:id/finalize", async (c) => {
    const { id } = await idAndBody(c, emptyBody, { optional: true });
    return invoiceResponse(c, await finalizeInvoice(c.get("ctx"), id));
  })
  .post("/invoices/:id/send", async (c) => {
    const { id, body } = await idAndBody(c, sendBody, { optional: true });
    return invoiceResponse(c, await sendInvoice(c.get("ctx"), id, body));
  })
  .post("/invoices/:id/mark-paid", async (c) => {
    const { id, body } = await idAndBody(c, markPaidBody, { optional: true });
    return invoiceResponse(c, await markInvoicePaid(c.get("ctx"), id, body));
  })
  .post("/invoices/:id/void", async (c) => {
    const { id } = await idAndBody(c, emptyBody, { optional: true });
    return invoiceResponse(c, await voidInvoice(c.get("ctx"), id));
  });
