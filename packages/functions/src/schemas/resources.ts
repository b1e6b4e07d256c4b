import * as v from "valibot";
import { ESTIMATE_STATUSES } from "@invoicing/core/estimates/model";
import { INVOICE_STATUSES, PAYMENT_METHODS } from "@invoicing/core/invoices/model";
import { SCHEDULE_STATUSES } from "@invoicing/core/schedules/model";
import { FREQUENCIES } from "@invoicing/core/schedules/recurrence";
import { TAX_CATEGORIES } from "@invoicing/core/documents/line-items";
import { EVENT_TYPES, RESOURCE_TYPES } from "@invoicing/core/events/types";
import { PROBLEM_CODES } from "../openapi/problem-types";

/**
 * The RESPONSE shapes of API.md, as valibot schemas. They are what GET /openapi.json documents for
 * every success body, and what the conformance test (test/openapi) checks real responses against,
 * so a field the code adds, drops or reshapes fails there instead of drifting from the document.
 * Every field is required: the API promises each listed field is always present, `null` when
 * it has no value — the nullable ones are the `v.nullable(...)` below.
 */

/** ISO 8601 UTC with milliseconds, the one spelling of every timestamp in a response. */
export const timestampOut = v.pipe(
  v.string(),
  v.isoTimestamp(),
  v.regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
  v.metadata({ description: "ISO 8601 UTC with milliseconds", examples: ["2026-11-22T09:30:00.000Z"] }),
);

const money = v.pipe(
  v.string(),
  v.regex(/^-?\d+\.\d{2}$/),
  v.metadata({ description: "Exact decimal amount with two decimals", examples: ["1234.50"] }),
);
const quantityOut = v.pipe(
  v.string(),
  v.regex(/^\d+\.\d{2}$/),
  v.metadata({ description: "Decimal with two decimals", examples: ["3.00"] }),
);
const taxRateOut = v.pipe(
  v.string(),
  v.regex(/^[01]\.\d{2}(\d{0,3}[1-9])?$/),
  v.metadata({
    description: "Fraction with 2 to 6 decimals, trailing zeros beyond two dropped (0.10 is ten percent)",
    examples: ["0.0825"],
  }),
);
const idOut = v.pipe(v.number(), v.integer(), v.minValue(1));
const currencyOut = v.pipe(
  v.string(),
  v.regex(/^[A-Z]{3}$/),
  v.metadata({ description: "ISO 4217 code", examples: ["USD"] }),
);
const text = v.string();
/** The same shape requests accept (schemas/common.ts), not the stricter JSON Schema "email" format. */
const emailOut = v.pipe(v.string(), v.regex(/^[^\s@]+@[^\s@]+$/), v.maxLength(254));
const nullableText = v.nullable(v.string());
const publicToken = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9_-]{22,}$/),
  v.description("URL-safe token (≥ 128 random bits) of the public page /public/…/{publicToken}; never changes"),
);

export const LineItem = v.strictObject({
  id: v.pipe(idOut, v.description("Unique within its document, never reused there")),
  description: text,
  quantity: quantityOut,
  unitPrice: money,
  taxRate: taxRateOut,
  taxCategory: v.picklist(TAX_CATEGORIES),
  amount: v.pipe(money, v.description("round(quantity × unitPrice) to cents, half away from zero")),
  sortOrder: v.pipe(v.number(), v.integer(), v.minValue(0), v.description("Zero-based position in the array")),
});

export const Address = v.strictObject({
  line1: nullableText,
  line2: nullableText,
  city: nullableText,
  postalCode: nullableText,
  region: nullableText,
  country: v.nullable(
    v.pipe(
      v.string(),
      v.regex(/^[A-Z]{2}$/),
      v.description(
        "ISO 3166-1 alpha-2. Null only for a client address stored as free text before addresses were structured",
      ),
    ),
  ),
});

export const Client = v.strictObject({
  id: idOut,
  name: text,
  email: v.nullable(emailOut),
  currency: currencyOut,
  paymentTermsDays: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(365)),
  address: v.nullable(Address),
  taxId: nullableText,
  createdAt: timestampOut,
  updatedAt: timestampOut,
});

export const BankAccount = v.strictObject({
  accountName: nullableText,
  iban: v.pipe(v.string(), v.regex(/^[A-Z]{2}\d{2}[A-Z0-9]+$/), v.description("Without spaces, uppercase")),
  bic: nullableText,
});

/** The seller as a document froze it (finalize, an estimate's send). */
export const Seller = v.strictObject({
  businessName: nullableText,
  legalName: nullableText,
  address: v.nullable(Address),
  taxId: nullableText,
  companyId: nullableText,
  contactName: nullableText,
  email: v.nullable(emailOut),
  phone: nullableText,
  website: nullableText,
  bankAccount: v.nullable(BankAccount),
  footer: nullableText,
});

export const Profile = v.strictObject({
  ...Seller.entries,
  defaultCurrency: currencyOut,
  defaultPaymentTermsDays: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(365)),
  defaultNotes: nullableText,
  defaultTerms: nullableText,
  hasLogo: v.boolean(),
  updatedAt: v.nullable(v.pipe(timestampOut, v.description("Null until the profile is first changed"))),
});

const totals = {
  subtotal: money,
  taxTotal: money,
  total: money,
};

export const TaxBreakdownEntry = v.strictObject({
  taxCategory: v.picklist(TAX_CATEGORIES),
  taxRate: taxRateOut,
  taxableAmount: v.pipe(money, v.description("Σ amount of the lines of this category and rate")),
  taxAmount: v.pipe(money, v.description("Σ round(amount × taxRate) of those lines")),
});
const taxBreakdown = v.pipe(
  v.array(TaxBreakdownEntry),
  v.description("One entry per (category, rate), by rate descending then category; adds up to subtotal and taxTotal"),
);

export const Invoice = v.strictObject({
  id: idOut,
  clientId: idOut,
  invoiceNumber: v.nullable(
    v.pipe(v.string(), v.regex(/^INV-\d{6,}$/), v.description("Assigned at finalize; null while draft")),
  ),
  status: v.picklist(INVOICE_STATUSES),
  currency: currencyOut,
  ...totals,
  amountPaid: money,
  amountDue: v.pipe(money, v.description("total − amountPaid")),
  notes: nullableText,
  terms: nullableText,
  dueDate: v.nullable(timestampOut),
  issueDate: v.nullable(timestampOut),
  sentAt: v.nullable(timestampOut),
  paidAt: v.nullable(timestampOut),
  publicToken,
  clientName: text,
  clientEmail: v.nullable(emailOut),
  lineItems: v.array(LineItem),
  cardProcessorPaymentLink: v.nullable(text),
  cardProcessorCheckoutSessionId: v.nullable(text),
  altProcessorPaymentLink: v.nullable(text),
  paymentMethod: v.nullable(v.picklist([...PAYMENT_METHODS, "card"], "`card` only from the card processor")),
  paymentReference: nullableText,
  recurringScheduleId: v.nullable(idOut),
  estimateId: v.nullable(idOut),
  taxBreakdown,
  taxExemptionReason: nullableText,
  buyerReference: nullableText,
  purchaseOrderReference: nullableText,
  deliveryDate: v.nullable(v.pipe(v.string(), v.regex(/^\d{4}-\d{2}-\d{2}$/), v.description("Date of supply"))),
  clientAddress: v.nullable(Address),
  clientTaxId: nullableText,
  seller: v.nullable(v.pipe(Seller, v.description("The business profile as it was at finalize; null while draft"))),
  createdAt: timestampOut,
  updatedAt: timestampOut,
});

export const Estimate = v.strictObject({
  id: idOut,
  clientId: idOut,
  estimateNumber: v.pipe(v.string(), v.regex(/^EST-\d{6,}$/), v.description("Assigned at creation")),
  status: v.picklist(ESTIMATE_STATUSES),
  currency: currencyOut,
  ...totals,
  notes: nullableText,
  terms: nullableText,
  validUntil: v.nullable(timestampOut),
  convertedInvoiceId: v.nullable(idOut),
  clientName: text,
  clientEmail: v.nullable(emailOut),
  lineItems: v.array(LineItem),
  publicToken,
  taxBreakdown,
  taxExemptionReason: nullableText,
  clientAddress: v.nullable(Address),
  clientTaxId: nullableText,
  seller: v.nullable(v.pipe(Seller, v.description("The business profile as it was at send; null until sent"))),
  createdAt: timestampOut,
  updatedAt: timestampOut,
});

export const RecurringSchedule = v.strictObject({
  id: idOut,
  clientId: idOut,
  status: v.picklist(SCHEDULE_STATUSES),
  frequency: v.picklist(FREQUENCIES),
  startDate: timestampOut,
  endDate: v.nullable(timestampOut),
  maxOccurrences: v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1))),
  occurrencesGenerated: v.pipe(v.number(), v.integer(), v.minValue(0)),
  nextRunAt: v.nullable(
    v.pipe(timestampOut, v.description("Next occurrence to generate; null once completed or cancelled")),
  ),
  lastRunAt: v.nullable(timestampOut),
  lastInvoiceId: v.nullable(idOut),
  autoSend: v.boolean(),
  paymentTermsDays: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(365)),
  currency: currencyOut,
  notes: nullableText,
  terms: nullableText,
  taxExemptionReason: nullableText,
  buyerReference: nullableText,
  purchaseOrderReference: nullableText,
  lineItems: v.array(LineItem),
  ...totals,
  taxBreakdown,
  createdAt: timestampOut,
  updatedAt: timestampOut,
});

export const ApiKey = v.strictObject({
  id: idOut,
  name: nullableText,
  prefix: v.pipe(v.string(), v.description("The key's first characters, to recognise it")),
  createdAt: timestampOut,
  lastUsedAt: v.nullable(timestampOut),
});

export const CreatedApiKey = v.strictObject({
  id: idOut,
  name: nullableText,
  key: v.pipe(
    v.string(),
    v.minLength(20),
    v.description("The secret: shown only in this response, stored only as a hash"),
  ),
  prefix: v.string(),
  createdAt: timestampOut,
});

export const Reminder = v.strictObject({
  scheduledAt: timestampOut,
  kind: v.picklist(["before_due", "on_due", "after_due"]),
  status: v.picklist(["scheduled", "sent", "cancelled"]),
  sentAt: v.nullable(timestampOut),
});

/** GET /email-deliveries: one email and what became of it (core/src/email/deliveries.ts). */
export const EmailDelivery = v.strictObject({
  id: v.string(),
  to: v.string(),
  subject: v.string(),
  status: v.picklist(["pending", "sending", "sent", "failed", "bounced", "complained", "rejected"]),
  createdAt: timestampOut,
  sentAt: v.nullable(timestampOut),
  detail: v.nullable(v.string()),
  reportedAt: v.nullable(timestampOut),
});

export const Payment = v.strictObject({
  id: idOut,
  amount: money,
  paymentMethod: v.picklist([...PAYMENT_METHODS, "card"]),
  paidAt: timestampOut,
  reference: nullableText,
  source: v.picklist(["manual", "card_processor"]),
  status: v.pipe(
    v.picklist(["succeeded", "refunded", "needs_refund"]),
    v.description(
      "needs_refund: card money for a void or already paid invoice, or more than was due; never counted in amountPaid",
    ),
  ),
  refundedAmount: money,
  createdAt: timestampOut,
});

export const WebhookReceipt = v.strictObject({
  received: v.literal(true),
  outcome: v.picklist(["applied", "duplicate", "needs_refund", "ignored"]),
});

export const FieldError = v.strictObject({
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
// ── Events and webhook endpoints (docs/events.md) ──
export const EventResource = v.strictObject({
  id: v.pipe(v.string(), v.description("Derived from the change; the webhook-id of its deliveries")),
  type: v.picklist(EVENT_TYPES),
  createdAt: timestampOut,
  resourceType: v.picklist(RESOURCE_TYPES as [string, ...string[]]),
  resourceId: idOut,
  data: v.pipe(
    v.record(v.string(), v.unknown()),
    v.description("The resource after the change (before it, for *.deleted)"),
  ),
});

const endpointFields = {
  id: idOut,
  url: v.string(),
  events: v.array(v.string()),
  description: v.nullable(v.string()),
  enabled: v.boolean(),
  createdAt: timestampOut,
};

export const WebhookEndpointResource = v.strictObject(endpointFields);
export const CreatedWebhookEndpoint = v.strictObject({
  ...endpointFields,
  secret: v.pipe(
    v.string(),
    v.regex(/^whsec_[A-Za-z0-9+/]{43}=$/),
    v.description("The signing secret: shown only in this response"),
  ),
});

export const DeliveryResource = v.strictObject({
  eventId: v.string(),
  type: v.string(),
  attempt: v.pipe(v.number(), v.integer(), v.minValue(1)),
  status: v.picklist(["succeeded", "failed", "pending"]),
  responseStatus: v.nullable(v.pipe(v.number(), v.integer())),
  error: v.nullable(v.string()),
  attemptedAt: v.nullable(timestampOut),
  nextAttemptAt: v.nullable(timestampOut),
});

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
  WebhookReceipt,
  Event: EventResource,
  WebhookEndpoint: WebhookEndpointResource,
  CreatedWebhookEndpoint,
  WebhookDelivery: DeliveryResource,
  FieldError,
  Problem,
  Health,
};
