import * as v from "valibot";
import type { ProblemCode } from "../problems";
import { createApiKeyBody } from "../routes/api-keys";
import { createClientBody, updateClientBody } from "../schemas/clients";
import { emptyBody, pagination } from "../schemas/common";
import { createEstimateBody, estimateListFilters, updateEstimateBody } from "../schemas/estimates";
import { createInvoiceBody, invoiceListFilters, markPaidBody, sendBody, updateInvoiceBody } from "../schemas/invoices";
import {
  ApiKey,
  CardPayment,
  Client,
  CreatedApiKey,
  Estimate,
  Health,
  Invoice,
  Profile,
  RecurringSchedule,
  Reminder,
  WebhookReceipt,
} from "../schemas/resources";
import { updateProfileBody } from "../schemas/profile";
import { createScheduleBody, scheduleListFilters, updateScheduleBody } from "../schemas/schedules";

/**
 * Every operation of the API, in one list: GET /openapi.json is built from it (openapi/document.ts)
 * and the conformance test (test/openapi) checks it against the routes the app registers and the
 * responses it gives. Request schemas are the ones the routes validate with; response schemas are
 * schemas/resources.ts. Add an operation here in the same change that adds its route.
 */

export type Method = "get" | "post" | "put" | "patch" | "delete";

export const TAGS = {
  "API keys": "Account settings: the bearer keys of the acting user (API.md section 2).",
  Profile: "The user's business: the seller on every document, its logo and the defaults (API.md section 12).",
  Clients: "Who invoices, estimates and schedules bill (API.md section 5).",
  Invoices: "Drafts, the lifecycle draft → finalized → sent → paid / overdue / void, reminders and PDFs (API.md section 6).",
  Estimates: "Quotes with line items, their lifecycle and conversion to an invoice (API.md section 7).",
  "Recurring schedules": "Schedules that generate invoices (API.md section 8).",
  Public: "Pages a client opens from an email, without an API key (API.md section 9).",
  "Card processor": "Card payments through the card processor (API.md section 9).",
  Service: "Health, this document and its page (API.md section 10).",
} as const;
export type Tag = keyof typeof TAGS;

export interface Success {
  status: 200 | 201 | 204 | 303;
  description: string;
  /** A JSON body of this schema (an array of it with `array`). No schema and no mediaType: no body. */
  schema?: v.GenericSchema;
  array?: true;
  /** A non-JSON body (the public HTML pages, PDFs). */
  mediaType?: "text/html" | "application/pdf" | readonly ("image/png" | "image/jpeg")[];
  location?: true;
  etag?: true;
}

export interface Operation {
  operationId: string;
  method: Method;
  /** OpenAPI path template (`{id}`); `{id}` is a positive integer, `{publicToken}` a string. */
  path: string;
  tag: Tag;
  summary: string;
  description?: string;
  /** Reachable without an API key (API.md section 2). */
  public?: true;
  /** Query parameters, as the valibot entries the route validates. */
  query?: v.ObjectEntries;
  /** A list endpoint (API.md section 4): `limit`/`offset`/`cursor` and a `Link` header. */
  paginated?: true;
  body?: {
    schema: v.GenericSchema;
    /** Action endpoints take an empty body (API.md section 1). */
    required: boolean;
    /** Read as raw bytes (the webhook's signature covers them), not as the API's JSON. */
    raw?: true;
    /** Media types of a non-JSON body (the logo), documented as binary. */
    mediaTypes?: readonly string[];
  };
  /** Honours `If-Match` (412 precondition_failed). */
  ifMatch?: true;
  /** Idempotency-Key handling of a POST (API.md section 11); default "kept" for authenticated POSTs. */
  idempotency?: "kept" | "ignored" | "none";
  /** Headers the operation reads besides the API's own. */
  headers?: readonly { name: string; required: boolean; description: string }[];
  /** Touches no database: no 503. */
  static?: true;
  success: Success;
  /** The problems particular to this operation; those that follow from its shape are added by document.ts. */
  problems: readonly ProblemCode[];
}

/** Pagination plus a list's filters, keeping their types (client.ts types query strings from them). */
const listQuery = <F extends v.ObjectEntries = {}>(filters?: F) => ({ ...pagination, ...filters }) as typeof pagination & F;
const list = (schema: v.GenericSchema, what: string): Success => ({ status: 200, description: what, schema, array: true });
const one = (schema: v.GenericSchema, what: string): Success => ({ status: 200, description: what, schema, etag: true });
const created = (schema: v.GenericSchema, what: string): Success => ({ status: 201, description: what, schema, location: true, etag: true });
const deleted: Success = { status: 204, description: "Deleted; no body." };
const action = { schema: emptyBody, required: false } as const;

export const operations = [
  // ── API keys (section 2) ──
  {
    operationId: "createApiKey",
    method: "post",
    path: "/api-keys",
    tag: "API keys",
    summary: "Create an API key",
    description: "The plain key is in this response only (it is stored as a hash). The body may be empty.",
    body: { schema: createApiKeyBody, required: false },
    idempotency: "ignored",
    success: { status: 201, description: "The new key, with its secret `key`.", schema: CreatedApiKey, location: true },
    problems: [],
  },
  {
    operationId: "listApiKeys",
    method: "get",
    path: "/api-keys",
    tag: "API keys",
    summary: "List the user's API keys",
    description: "A short list, not paginated; no secrets.",
    success: list(ApiKey, "The user's keys."),
    problems: [],
  },
  {
    operationId: "deleteApiKey",
    method: "delete",
    path: "/api-keys/{id}",
    tag: "API keys",
    summary: "Revoke an API key",
    description: "The key stops working at once (its next request is a 401).",
    success: deleted,
    problems: [],
  },

  // ── Business profile (section 12) ──
  {
    operationId: "getProfile",
    method: "get",
    path: "/profile",
    tag: "Profile",
    summary: "Get the business profile",
    description: "Every user has one: all nulls and the defaults (USD, 30 days) until first changed.",
    success: one(Profile, "The profile."),
    problems: [],
  },
  {
    operationId: "updateProfile",
    method: "patch",
    path: "/profile",
    tag: "Profile",
    summary: "Change the business profile",
    description: "`null` clears a field; an address or bank account is replaced whole; `{}` changes nothing. The IBAN is checked (country, length, check digits) and stored without spaces, uppercase.",
    body: { schema: updateProfileBody, required: true },
    ifMatch: true,
    success: one(Profile, "The updated profile."),
    problems: [],
  },
  {
    operationId: "putProfileLogo",
    method: "put",
    path: "/profile/logo",
    tag: "Profile",
    summary: "Upload the logo",
    description: "The body is the image itself: a PNG or JPEG of at most 2000 × 2000 pixels (checked by its bytes, else 400) and 256 KiB (413). Another content type is 415.",
    body: { schema: v.string(), required: true, raw: true, mediaTypes: ["image/png", "image/jpeg"] },
    success: { status: 204, description: "Stored; `hasLogo` is true." },
    problems: ["unsupported_media_type", "validation_error"],
  },
  {
    operationId: "getProfileLogo",
    method: "get",
    path: "/profile/logo",
    tag: "Profile",
    summary: "Download the logo",
    success: { status: 200, description: "The image, with its content type.", mediaType: ["image/png", "image/jpeg"] },
    problems: ["not_found"],
  },
  {
    operationId: "deleteProfileLogo",
    method: "delete",
    path: "/profile/logo",
    tag: "Profile",
    summary: "Remove the logo",
    success: { status: 204, description: "Removed (also when there was none)." },
    problems: [],
  },

  // ── Clients (section 5) ──
  {
    operationId: "createClient",
    method: "post",
    path: "/clients",
    tag: "Clients",
    summary: "Create a client",
    body: { schema: createClientBody, required: true },
    success: created(Client, "The new client."),
    problems: [],
  },
  {
    operationId: "listClients",
    method: "get",
    path: "/clients",
    tag: "Clients",
    summary: "List clients",
    query: listQuery(),
    paginated: true,
    success: list(Client, "A page of clients, newest first."),
    problems: [],
  },
  {
    operationId: "getClient",
    method: "get",
    path: "/clients/{id}",
    tag: "Clients",
    summary: "Get a client",
    success: one(Client, "The client."),
    problems: [],
  },
  {
    operationId: "updateClient",
    method: "patch",
    path: "/clients/{id}",
    tag: "Clients",
    summary: "Update a client",
    description: "Changing a client never changes a finalized invoice's `clientName`/`clientEmail`.",
    body: { schema: updateClientBody, required: true },
    ifMatch: true,
    success: one(Client, "The updated client."),
    problems: [],
  },
  {
    operationId: "deleteClient",
    method: "delete",
    path: "/clients/{id}",
    tag: "Clients",
    summary: "Delete a client",
    success: deleted,
    problems: ["client_in_use"],
  },

  // ── Invoices (section 6) ──
  {
    operationId: "createInvoice",
    method: "post",
    path: "/invoices",
    tag: "Invoices",
    summary: "Create a draft invoice",
    description:
      "`currency` defaults to the client's; `clientName`/`clientEmail` are copied from the client; `invoiceNumber` stays null until finalize.",
    body: { schema: createInvoiceBody, required: true },
    success: created(Invoice, "The new draft."),
    problems: ["client_not_found"],
  },
  {
    operationId: "listInvoices",
    method: "get",
    path: "/invoices",
    tag: "Invoices",
    summary: "List invoices",
    description: "A `clientId` the user does not have gives an empty list.",
    query: listQuery(invoiceListFilters),
    paginated: true,
    success: list(Invoice, "A page of invoices, newest first."),
    problems: [],
  },
  {
    operationId: "getInvoice",
    method: "get",
    path: "/invoices/{id}",
    tag: "Invoices",
    summary: "Get an invoice",
    success: one(Invoice, "The invoice."),
    problems: [],
  },
  {
    operationId: "updateInvoice",
    method: "patch",
    path: "/invoices/{id}",
    tag: "Invoices",
    summary: "Update a draft invoice",
    description:
      "Draft only. `null` clears a nullable field; `lineItems` replaces all lines (new ids); a new `clientId` refreshes `clientName`/`clientEmail` (not `currency`). `{}` is valid and changes nothing.",
    body: { schema: updateInvoiceBody, required: true },
    ifMatch: true,
    success: one(Invoice, "The updated draft."),
    problems: ["invoice_not_editable", "client_not_found"],
  },
  {
    operationId: "deleteInvoice",
    method: "delete",
    path: "/invoices/{id}",
    tag: "Invoices",
    summary: "Delete a draft invoice",
    success: deleted,
    problems: ["invoice_not_editable"],
  },
  {
    operationId: "finalizeInvoice",
    method: "post",
    path: "/invoices/{id}/finalize",
    tag: "Invoices",
    summary: "Finalize a draft",
    description:
      "draft → finalized. Assigns the next `invoiceNumber` (INV-000001, … per user, gapless), sets `issueDate` (now) and `dueDate` (issueDate + the client's payment terms) when null. Amounts never change afterwards.",
    body: action,
    success: one(Invoice, "The finalized invoice."),
    problems: ["invalid_transition", "empty_invoice", "negative_total"],
  },
  {
    operationId: "sendInvoice",
    method: "post",
    path: "/invoices/{id}/send",
    tag: "Invoices",
    summary: "Send a finalized invoice",
    description:
      "finalized → sent. Emails the invoice with its public link to `to`, else the client's email, and schedules the reminders. With a card processor configured, creates its checkout session (`cardProcessorPaymentLink`).",
    body: { schema: sendBody, required: false },
    success: one(Invoice, "The sent invoice."),
    problems: ["invalid_transition", "client_email_missing"],
  },
  {
    operationId: "markInvoicePaid",
    method: "post",
    path: "/invoices/{id}/mark-paid",
    tag: "Invoices",
    summary: "Record a manual payment",
    description:
      "sent or overdue → paid. Sets `amountPaid` = `total`, `paidAt` (now when omitted; a future one is a 400), `paymentMethod`, `paymentReference`; cancels pending reminders.",
    body: { schema: markPaidBody, required: true },
    success: one(Invoice, "The paid invoice."),
    problems: ["invalid_transition"],
  },
  {
    operationId: "voidInvoice",
    method: "post",
    path: "/invoices/{id}/void",
    tag: "Invoices",
    summary: "Void an invoice",
    description: "Any status except void → void. Keeps the invoice number; cancels pending reminders.",
    body: action,
    success: one(Invoice, "The void invoice."),
    problems: ["invalid_transition"],
  },
  {
    operationId: "listInvoiceReminders",
    method: "get",
    path: "/invoices/{id}/reminders",
    tag: "Invoices",
    summary: "List an invoice's reminders",
    description: "Ordered by `scheduledAt`; cancelled ones stay listed; empty before send. A short list, not paginated.",
    success: list(Reminder, "The reminders."),
    problems: [],
  },
  {
    operationId: "getInvoicePdf",
    method: "get",
    path: "/invoices/{id}/pdf",
    tag: "Invoices",
    summary: "Download an invoice as PDF",
    description: "Any status; a draft is marked DRAFT.",
    success: { status: 200, description: "The PDF.", mediaType: "application/pdf" },
    problems: [],
  },
  {
    operationId: "listInvoiceCardPayments",
    method: "get",
    path: "/invoices/{id}/card-payments",
    tag: "Card processor",
    summary: "List an invoice's card payments",
    description:
      "What the card processor reported for the invoice, oldest first, including payments that could not be applied (`needs_refund`, with the reason). A short list, not paginated.",
    success: list(CardPayment, "The card payments."),
    problems: [],
  },

  // ── Estimates (section 7) ──
  {
    operationId: "createEstimate",
    method: "post",
    path: "/estimates",
    tag: "Estimates",
    summary: "Create a draft estimate",
    description: "`estimateNumber` (EST-000001, … per user) is assigned at creation.",
    body: { schema: createEstimateBody, required: true },
    success: created(Estimate, "The new draft."),
    problems: ["client_not_found"],
  },
  {
    operationId: "listEstimates",
    method: "get",
    path: "/estimates",
    tag: "Estimates",
    summary: "List estimates",
    query: listQuery(estimateListFilters),
    paginated: true,
    success: list(Estimate, "A page of estimates, newest first."),
    problems: [],
  },
  {
    operationId: "getEstimate",
    method: "get",
    path: "/estimates/{id}",
    tag: "Estimates",
    summary: "Get an estimate",
    success: one(Estimate, "The estimate."),
    problems: [],
  },
  {
    operationId: "updateEstimate",
    method: "patch",
    path: "/estimates/{id}",
    tag: "Estimates",
    summary: "Update an estimate",
    description: "Draft or sent only; same rules as invoices.",
    body: { schema: updateEstimateBody, required: true },
    ifMatch: true,
    success: one(Estimate, "The updated estimate."),
    problems: ["estimate_not_editable", "client_not_found"],
  },
  {
    operationId: "deleteEstimate",
    method: "delete",
    path: "/estimates/{id}",
    tag: "Estimates",
    summary: "Delete an estimate",
    description: "Not once accepted or converted.",
    success: deleted,
    problems: ["estimate_not_editable"],
  },
  {
    operationId: "sendEstimate",
    method: "post",
    path: "/estimates/{id}/send",
    tag: "Estimates",
    summary: "Send an estimate",
    description: "draft → sent. Emails the link to its public page; recipient rules as for invoices.",
    body: { schema: sendBody, required: false },
    success: one(Estimate, "The sent estimate."),
    problems: ["invalid_transition", "client_email_missing"],
  },
  {
    operationId: "acceptEstimate",
    method: "post",
    path: "/estimates/{id}/accept",
    tag: "Estimates",
    summary: "Accept a sent estimate",
    body: action,
    success: one(Estimate, "The accepted estimate."),
    problems: ["invalid_transition"],
  },
  {
    operationId: "declineEstimate",
    method: "post",
    path: "/estimates/{id}/decline",
    tag: "Estimates",
    summary: "Decline a sent estimate",
    body: action,
    success: one(Estimate, "The declined estimate."),
    problems: ["invalid_transition"],
  },
  {
    operationId: "convertEstimate",
    method: "post",
    path: "/estimates/{id}/convert",
    tag: "Estimates",
    summary: "Convert an estimate to a draft invoice",
    description:
      "draft, sent or accepted → converted, atomically with a new draft invoice (the estimate's client, currency, notes, terms and lines; `estimateId` set). Responds with the new invoice.",
    body: action,
    success: { ...created(Invoice, "The new draft invoice."), description: "The new draft invoice; `Location` is its URL." },
    problems: ["already_converted", "invalid_transition"],
  },

  // ── Recurring schedules (section 8) ──
  {
    operationId: "createRecurringSchedule",
    method: "post",
    path: "/recurring-schedules",
    tag: "Recurring schedules",
    summary: "Create a recurring schedule",
    description:
      "`startDate` defaults to now; when it is not later than now the first invoice is generated within this request. `paymentTermsDays` and `currency` default to the client's; `autoSend` to false. A `startDate` before today (UTC) or an `endDate` before `startDate` is a 400.",
    body: { schema: createScheduleBody, required: true },
    success: created(RecurringSchedule, "The new schedule."),
    problems: ["client_not_found"],
  },
  {
    operationId: "listRecurringSchedules",
    method: "get",
    path: "/recurring-schedules",
    tag: "Recurring schedules",
    summary: "List recurring schedules",
    query: listQuery(scheduleListFilters),
    paginated: true,
    success: list(RecurringSchedule, "A page of schedules, newest first."),
    problems: [],
  },
  {
    operationId: "getRecurringSchedule",
    method: "get",
    path: "/recurring-schedules/{id}",
    tag: "Recurring schedules",
    summary: "Get a recurring schedule",
    success: one(RecurringSchedule, "The schedule."),
    problems: [],
  },
  {
    operationId: "updateRecurringSchedule",
    method: "patch",
    path: "/recurring-schedules/{id}",
    tag: "Recurring schedules",
    summary: "Update a recurring schedule",
    description:
      "Active or paused only. The template fields at any time; `frequency`, `startDate` and `clientId` only while `occurrencesGenerated` is 0.",
    body: { schema: updateScheduleBody, required: true },
    ifMatch: true,
    success: one(RecurringSchedule, "The updated schedule."),
    problems: ["schedule_not_editable", "client_not_found"],
  },
  {
    operationId: "deleteRecurringSchedule",
    method: "delete",
    path: "/recurring-schedules/{id}",
    tag: "Recurring schedules",
    summary: "Delete a recurring schedule",
    description: "Its invoices stay.",
    success: deleted,
    problems: [],
  },
  {
    operationId: "pauseRecurringSchedule",
    method: "post",
    path: "/recurring-schedules/{id}/pause",
    tag: "Recurring schedules",
    summary: "Pause a schedule",
    description: "active → paused.",
    body: action,
    success: one(RecurringSchedule, "The paused schedule."),
    problems: ["invalid_transition"],
  },
  {
    operationId: "resumeRecurringSchedule",
    method: "post",
    path: "/recurring-schedules/{id}/resume",
    tag: "Recurring schedules",
    summary: "Resume a schedule",
    description: "paused → active. Occurrences earlier than now are skipped, not counted.",
    body: action,
    success: one(RecurringSchedule, "The active schedule."),
    problems: ["invalid_transition"],
  },
  {
    operationId: "cancelRecurringSchedule",
    method: "post",
    path: "/recurring-schedules/{id}/cancel",
    tag: "Recurring schedules",
    summary: "Cancel a schedule",
    description: "active or paused → cancelled.",
    body: action,
    success: one(RecurringSchedule, "The cancelled schedule."),
    problems: ["invalid_transition"],
  },

  // ── Public pages and the card processor (section 9) ──
  {
    operationId: "getPublicInvoicePage",
    method: "get",
    path: "/public/invoices/{publicToken}",
    tag: "Public",
    summary: "The public page of an invoice",
    description: "An HTML page of a non-draft invoice (void included), with a pay button when a payment link exists.",
    public: true,
    success: { status: 200, description: "The page.", mediaType: "text/html" },
    problems: ["not_found"],
  },
  {
    operationId: "getPublicInvoicePdf",
    method: "get",
    path: "/public/invoices/{publicToken}/pdf",
    tag: "Public",
    summary: "The PDF of a non-draft invoice",
    public: true,
    success: { status: 200, description: "The PDF.", mediaType: "application/pdf" },
    problems: ["not_found"],
  },
  {
    operationId: "payPublicInvoice",
    method: "get",
    path: "/public/invoices/{publicToken}/pay",
    tag: "Card processor",
    summary: "The pay button's target",
    description:
      "Redirects to the invoice's card checkout page (a fresh one when the stored session expired), or to its alternative payment link when no card processor is configured. 404 for drafts, unknown tokens, or when there is no way to pay.",
    public: true,
    success: { status: 303, description: "See `Location`.", location: true },
    problems: ["not_found"],
  },
  {
    operationId: "getPublicEstimatePage",
    method: "get",
    path: "/public/estimates/{publicToken}",
    tag: "Public",
    summary: "The public page of an estimate",
    description: "An HTML page of a non-draft estimate.",
    public: true,
    success: { status: 200, description: "The page.", mediaType: "text/html" },
    problems: ["not_found"],
  },
  {
    operationId: "getEstimatePdf",
    method: "get",
    path: "/estimates/{id}/pdf",
    tag: "Estimates",
    summary: "Download an estimate as PDF",
    description: "Any status; a draft is marked DRAFT.",
    success: { status: 200, description: "The PDF.", mediaType: "application/pdf" },
    problems: [],
  },
  {
    operationId: "getPublicEstimatePdf",
    method: "get",
    path: "/public/estimates/{publicToken}/pdf",
    tag: "Public",
    summary: "The PDF of a non-draft estimate",
    public: true,
    success: { status: 200, description: "The PDF.", mediaType: "application/pdf" },
    problems: ["not_found"],
  },
  {
    operationId: "cardProcessorWebhook",
    method: "post",
    path: "/webhooks/card-processor",
    tag: "Card processor",
    summary: "The card processor's webhook",
    description:
      "Called by the card processor, not by API users. Its signature over the exact body is the authentication: missing or invalid is a 400 `invalid_signature` and nothing changes. A verified event is answered 200 whatever it was, so the processor stops retrying it.",
    public: true,
    idempotency: "none",
    headers: [{ name: "Stripe-Signature", required: true, description: "The card processor's signature of the body." }],
    body: { schema: v.looseObject({}), required: true, raw: true },
    success: { status: 200, description: "The event was verified and handled.", schema: WebhookReceipt },
    problems: ["invalid_signature"],
  },

  // ── Service (section 10) ──
  {
    operationId: "getHealth",
    method: "get",
    path: "/health",
    tag: "Service",
    summary: "Health check",
    description: "200 once the table is reachable.",
    public: true,
    success: { status: 200, description: "Healthy.", schema: Health },
    problems: [],
  },
  {
    operationId: "getOpenApiDocument",
    method: "get",
    path: "/openapi.json",
    tag: "Service",
    summary: "This OpenAPI 3.1 document",
    public: true,
    static: true,
    success: { status: 200, description: "The document.", schema: v.looseObject({ openapi: v.literal("3.1.0") }) },
    problems: [],
  },
  {
    operationId: "getDocs",
    method: "get",
    path: "/docs",
    tag: "Service",
    summary: "This document, rendered",
    description: "An HTML page that renders this document (served whole by the API: no CDN) and explains each problem type.",
    public: true,
    static: true,
    success: { status: 200, description: "The page.", mediaType: "text/html" },
    problems: [],
  },
] as const satisfies readonly Operation[];
