import { Hono, type Context } from "hono";
import { issueCreditNote, sendCreditNote } from "@invoicing/core/credit-notes/credit-notes";
import {
  getCreditNote,
  listCreditNotes,
  listInvoiceCreditNotes,
  toCreditNote,
} from "@invoicing/core/credit-notes/read";
import type { CreditNoteItem } from "@invoicing/core/credit-notes/model";
import { etagOf } from "@invoicing/core/db/versioning";
import type { AppEnv } from "../http/app-env";
import { created, describe, list, one } from "../http/describe";
import { pageResponse } from "../http/pagination";
import { idParam } from "../http/params";
import { createCreditNoteBody, creditNoteListFilters } from "../schemas/credit-notes";
import { documentSendBody } from "../schemas/documents";
import { DOCUMENT_SEND_PROBLEMS, documentSendOptions } from "./peppol";
import { CreditNote } from "../schemas/resources";
import { jsonBody, listQuery } from "../http/validators";

/** Credit notes (API.md section 17, docs/credit-notes.md): issue, read, list, send. */
function creditNoteResponse(c: Context<AppEnv>, item: CreditNoteItem, status: 200 | 201 = 200): Response {
  const headers: Record<string, string> = { ETag: etagOf(item.version) };
  if (status === 201) headers.Location = `/credit-notes/${item.id}`;
  return c.json(toCreditNote(item), status, headers);
}

const tag = "Credit notes";

export const creditNotes = new Hono<AppEnv>()
  .post(
    "/invoices/:id/credit-notes",
    describe({
      operationId: "createCreditNote",
      tag,
      summary: "Issue a credit note for an invoice",
      description:
        "The invoice is finalized, sent, overdue or paid (else `invalid_transition`). Each line credits a line of the invoice (`invoiceLineId`, `quantity` defaulting to what of it is not yet credited; an id the invoice does not have is a 400 on that line) or is a free line (`description`, `unitPrice` > 0, the line rules of invoices). No `lineItems`: everything of the invoice not yet credited. No line or a total ≤ 0 is `empty_credit_note`; more of a line than is left, or more than what is left of the invoice's `total`, is `credit_exceeds_invoice`, nothing written. In the same atomic step the invoice's `creditedAmount` grows by the credit note's `total`: wholly credited it becomes void; else, nothing left due, paid; pending reminders follow its status. Numbers `CN-000001`, … per user, gapless.",
      success: created(CreditNote, "The credit note; `Location` is its URL."),
      problems: ["invalid_transition", "credit_exceeds_invoice", "empty_credit_note"],
    }),
    jsonBody(createCreditNoteBody, { emptyAsObject: true }),
    async (c) => creditNoteResponse(c, await issueCreditNote(c.get("ctx"), idParam(c), c.req.valid("json")), 201),
  )
  .get(
    "/invoices/:id/credit-notes",
    describe({
      operationId: "listInvoiceCreditNotes",
      tag,
      summary: "List an invoice's credit notes",
      description: "Oldest first; a short list, not paginated.",
      success: list(CreditNote, "The invoice's credit notes."),
    }),
    async (c) => c.json((await listInvoiceCreditNotes(c.get("ctx"), idParam(c))).map(toCreditNote)),
  )
  .get(
    "/credit-notes",
    describe({
      operationId: "listCreditNotes",
      tag,
      summary: "List credit notes",
      description: "An `invoiceId` or `clientId` the user does not have gives an empty list.",
      success: list(CreditNote, "A page of credit notes, newest first."),
    }),
    listQuery(creditNoteListFilters),
    async (c) => {
      const { page, invoiceId, clientId } = c.req.valid("query");
      return pageResponse(c, await listCreditNotes(c.get("ctx"), { invoiceId, clientId }, page), page, toCreditNote);
    },
  )
  .get(
    "/credit-notes/:id",
    describe({
      operationId: "getCreditNote",
      rebuilds: "CREDITNOTE",
      tag,
      summary: "Get a credit note",
      success: one(CreditNote, "The credit note."),
    }),
    async (c) => creditNoteResponse(c, await getCreditNote(c.get("ctx"), idParam(c))),
  )
  .post(
    "/credit-notes/:id/send",
    describe({
      operationId: "sendCreditNote",
      tag,
      summary: "Email a credit note",
      description:
        "Emails the credit note with its PDF attached (`CN-000001.pdf`) to `to`, else the client's email on it, else the client's current email; counts against the email quota like an invoice's send; sets `sentAt`. May be repeated; the credit note stays `issued`. " +
        '`"channel": "peppol"` sends it over the Peppol network instead, with the checks and `peppolDelivery` of an invoice\'s Peppol send (docs/peppol.md).',
      success: one(CreditNote, "The credit note, with its new `sentAt`."),
      problems: DOCUMENT_SEND_PROBLEMS,
    }),
    jsonBody(documentSendBody, { emptyAsObject: true }),
    async (c) => {
      const ctx = c.get("ctx");
      const options = await documentSendOptions(ctx, "CREDITNOTE", idParam(c), c.req.valid("json"));
      return creditNoteResponse(c, await sendCreditNote(ctx, idParam(c), options));
    },
  );
