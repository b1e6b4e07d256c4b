import { Hono, type Context } from "hono";
import { etagOf } from "@invoicing/core/db/versioning";
import {
  createInvoice,
  deleteInvoice,
  getInvoice,
  listInvoices,
  updateInvoice,
} from "@invoicing/core/invoices/invoices";
import { finalizeInvoice, sendInvoice, voidInvoice } from "@invoicing/core/invoices/lifecycle";
import { markInvoicePaid } from "@invoicing/core/payments/payments";
import { toInvoice, type InvoiceItem } from "@invoicing/core/invoices/model";
import type { AppEnv } from "../http/app-env";
import { created, deleted, describe, list, one } from "../http/describe";
import { pageResponse } from "../http/pagination";
import { idParam } from "../http/params";
import { createInvoiceBody, invoiceListFilters, markPaidBody, updateInvoiceBody } from "../schemas/invoices";
import { documentSendBody } from "../schemas/documents";
import { DOCUMENT_SEND_PROBLEMS, documentSendOptions } from "./peppol";
import { Invoice } from "../schemas/resources";
import { actionBody, ifMatch, jsonBody, listQuery } from "../http/validators";

/** An invoice response: the whole resource with its ETag. */
export function invoiceResponse(c: Context<AppEnv>, item: InvoiceItem, status: 200 | 201 = 200): Response {
  const headers: Record<string, string> = { ETag: etagOf(item.version) };
  if (status === 201) headers.Location = `/invoices/${item.id}`;
  return c.json(toInvoice(item), status, headers);
}

const tag = "Invoices";

export const invoices = new Hono<AppEnv>()
  .post(
    "/invoices",
    describe({
      operationId: "createInvoice",
      tag,
      summary: "Create a draft invoice",
      description:
        "`currency` defaults to the client's; `clientName`/`clientEmail` are copied from the client; `invoiceNumber` stays null until finalize.",
      success: created(Invoice, "The new draft."),
      problems: ["client_not_found"],
    }),
    jsonBody(createInvoiceBody),
    async (c) => invoiceResponse(c, await createInvoice(c.get("ctx"), c.req.valid("json")), 201),
  )
  .get(
    "/invoices",
    describe({
      operationId: "listInvoices",
      tag,
      summary: "List invoices",
      description: "A `clientId` the user does not have gives an empty list.",
      success: list(Invoice, "A page of invoices, newest first."),
    }),
    listQuery(invoiceListFilters),
    async (c) => {
      const { page, status, clientId } = c.req.valid("query");
      return pageResponse(c, await listInvoices(c.get("ctx"), { status, clientId }, page), page, toInvoice);
    },
  )
  .get(
    "/invoices/:id",
    describe({
      operationId: "getInvoice",
      rebuilds: "INVOICE",
      tag,
      summary: "Get an invoice",
      success: one(Invoice, "The invoice."),
    }),
    async (c) => invoiceResponse(c, await getInvoice(c.get("ctx"), idParam(c))),
  )
  .patch(
    "/invoices/:id",
    describe({
      operationId: "updateInvoice",
      tag,
      summary: "Update a draft invoice",
      description:
        "Draft only. `null` clears a nullable field; `lineItems` replaces all lines (new ids); a new `clientId` refreshes `clientName`/`clientEmail` (not `currency`). `{}` is valid and changes nothing.",
      success: one(Invoice, "The updated draft."),
      problems: ["invoice_not_editable", "client_not_found"],
    }),
    ifMatch,
    jsonBody(updateInvoiceBody),
    async (c) =>
      invoiceResponse(
        c,
        await updateInvoice(c.get("ctx"), idParam(c), c.req.valid("json"), c.req.valid("header")["if-match"]),
      ),
  )
  .delete(
    "/invoices/:id",
    describe({
      operationId: "deleteInvoice",
      tag,
      summary: "Delete a draft invoice",
      success: deleted,
      problems: ["invoice_not_editable"],
    }),
    async (c) => {
      await deleteInvoice(c.get("ctx"), idParam(c));
      return c.body(null, 204);
    },
  )
  .post(
    "/invoices/:id/finalize",
    describe({
      operationId: "finalizeInvoice",
      tag,
      summary: "Finalize a draft",
      description:
        "draft → finalized. Assigns the next `invoiceNumber` (INV-000001, … per user, gapless), sets `issueDate` (now) and `dueDate` (issueDate + the client's payment terms) when null. Amounts never change afterwards.",
      success: one(Invoice, "The finalized invoice."),
      problems: ["invalid_transition", "empty_invoice", "negative_total"],
    }),
    actionBody,
    async (c) => invoiceResponse(c, await finalizeInvoice(c.get("ctx"), idParam(c))),
  )
  .post(
    "/invoices/:id/send",
    describe({
      operationId: "sendInvoice",
      tag,
      summary: "Send a finalized invoice",
      description:
        "finalized → sent. Emails the invoice with its public link to `to`, else the client's email, and schedules the reminders. With a card processor configured, sets `cardProcessorPaymentLink` to the invoice's pay link (`/public/invoices/{publicToken}/pay`); send itself never calls the card processor. " +
        '`"channel": "peppol"` sends it over the Peppol network instead (docs/peppol.md): checked first, in this order, with nothing changed when a check fails — a provider configured (peppol_not_configured), the business registered (peppol_not_registered), `format=peppol` complete (e_invoice_incomplete), the buyer reachable (peppol_recipient_unreachable); then `peppolDelivery` is pending and the hand-over runs in the background.',
      success: one(Invoice, "The sent invoice."),
      problems: ["invalid_transition", ...DOCUMENT_SEND_PROBLEMS],
    }),
    jsonBody(documentSendBody, { emptyAsObject: true }),
    async (c) => {
      const ctx = c.get("ctx");
      const options = await documentSendOptions(ctx, "INVOICE", idParam(c), c.req.valid("json"));
      return invoiceResponse(c, await sendInvoice(ctx, idParam(c), options));
    },
  )
  .post(
    "/invoices/:id/mark-paid",
    describe({
      operationId: "markInvoicePaid",
      tag,
      summary: "Record a manual payment",
      description:
        "sent or overdue → paid: records a payment of the whole `amountDue` (see Payments), so `amountPaid` = `total`; sets `paidAt` (now when omitted; a future one is a 400), `paymentMethod`, `paymentReference`; cancels pending reminders.",
      success: one(Invoice, "The paid invoice."),
      problems: ["invalid_transition"],
    }),
    jsonBody(markPaidBody, { emptyAsObject: true }),
    async (c) => invoiceResponse(c, await markInvoicePaid(c.get("ctx"), idParam(c), c.req.valid("json"))),
  )
  .post(
    "/invoices/:id/void",
    describe({
      operationId: "voidInvoice",
      tag,
      summary: "Void an invoice",
      description: "Any status except void → void. Keeps the invoice number; cancels pending reminders.",
      success: one(Invoice, "The void invoice."),
      problems: ["invalid_transition"],
    }),
    actionBody,
    async (c) => invoiceResponse(c, await voidInvoice(c.get("ctx"), idParam(c))),
  );
