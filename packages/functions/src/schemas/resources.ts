import * as v from "valibot";
import { Address } from "@invoicing/core/address/resource";
import { Client } from "@invoicing/core/clients/resource";
import { CreditNote, CreditNoteLineItem } from "@invoicing/core/credit-notes/resource";
import { LineItem, TaxBreakdownEntry } from "@invoicing/core/documents/resource";
import { EmailDelivery } from "@invoicing/core/email/resource";
import { Estimate } from "@invoicing/core/estimates/resource";
import { Event } from "@invoicing/core/events/resource";
import { Invoice } from "@invoicing/core/invoices/resource";
import { ApiKey, CreatedApiKey } from "@invoicing/core/keys/resource";
import { Payment } from "@invoicing/core/payments/resource";
import { Profile, Seller } from "@invoicing/core/profile/resource";
import { Reminder } from "@invoicing/core/invoices/reminder-resource";
import { AgingClientRow, AgingReport, AgingTotal, RevenueRow, TaxRow } from "@invoicing/core/reports/resource";
import { RecurringSchedule } from "@invoicing/core/schedules/resource";
import { CreatedWebhookEndpoint, Delivery, WebhookEndpoint } from "@invoicing/core/webhooks/resource";
import { PROBLEM_CODES } from "./problem-types";

/**
 * The RESPONSE shapes of the API, as valibot schemas. They are what GET /openapi.json documents for
 * every success body, and what the conformance test (test/openapi) checks real responses against,
 * so a field the code adds, drops or reshapes fails there instead of drifting from the document.
 *
 * A resource's schema is written once, in core beside its model (core/src/resource.ts says how):
 * core infers the resource's type and the fields it shows from it. Here are only the shapes that
 * belong to HTTP itself (problems, the webhook receipt, health), and the names the document gives
 * them all.
 */
export {
  Address,
  AgingClientRow,
  AgingReport,
  AgingTotal,
  ApiKey,
  Client,
  CreatedApiKey,
  CreatedWebhookEndpoint,
  CreditNote,
  CreditNoteLineItem,
  EmailDelivery,
  Estimate,
  Invoice,
  LineItem,
  Payment,
  Profile,
  RecurringSchedule,
  Reminder,
  RevenueRow,
  Seller,
  TaxBreakdownEntry,
  TaxRow,
};
export { Delivery as DeliveryResource, Event as EventResource, WebhookEndpoint as WebhookEndpointResource };

export const WebhookReceipt = v.strictObject({
  received: v.literal(true),
  outcome: v.picklist(["applied", "duplicate", "needs_refund", "ignored"]),
});

const FieldError = v.strictObject({
  path: v.pipe(
    v.string(),
    v.description('Dot-separated path of the offending field ("lineItems.0.quantity"), "" for the body as a whole'),
  ),
  message: v.string(),
});

/** RFC 9457 problem details. `errors` comes with `validation_error` only. */
export const Problem = v.strictObject({
  type: v.pipe(v.string(), v.url(), v.description("Absolute URI of the problem type: /docs#problem-{code}")),
  title: v.string(),
  status: v.pipe(v.number(), v.integer(), v.minValue(400), v.maxValue(599)),
  detail: v.string(),
  code: v.picklist(PROBLEM_CODES),
  errors: v.optional(v.pipe(v.array(FieldError), v.maxLength(50, "at most 50: the first found"))),
});

export const Health = v.strictObject({ status: v.literal("ok") });

/** The named response shapes: components.schemas of the OpenAPI document, by these names. */
export const resources = {
  LineItem,
  TaxBreakdownEntry,
  Address,
  Client,
  Profile,
  Seller,
  Invoice,
  Estimate,
  RecurringSchedule,
  ApiKey,
  CreatedApiKey,
  Reminder,
  EmailDelivery,
  Payment,
  CreditNoteLineItem,
  CreditNote,
  WebhookReceipt,
  Event,
  WebhookEndpoint,
  CreatedWebhookEndpoint,
  WebhookDelivery: Delivery,
  RevenueRow,
  TaxRow,
  AgingTotal,
  AgingClientRow,
  AgingReport,
  FieldError,
  Problem,
  Health,
};
