/**
 * The document's tags, in the order /docs shows them. A route names its tag in `describe()`
 * (openapi/describe.ts); a tag that is not here does not compile.
 */
export const TAGS = {
  "API keys": "Account settings: the bearer keys of the acting user (API.md section 2).",
  Clients: "Who invoices, estimates and schedules bill (API.md section 5).",
  Invoices: "Drafts, the lifecycle draft → finalized → sent → paid / overdue / void, reminders and PDFs (API.md section 6).",
  Estimates: "Quotes with line items, their lifecycle and conversion to an invoice (API.md section 7).",
  "Recurring schedules": "Schedules that generate invoices (API.md section 8).",
  Email: "What became of the emails sent for the user: failures, bounces, complaints (docs/email-and-public-pages.md).",
  Events: "The activity log and webhook endpoints: every change is an event, delivered per Standard Webhooks (docs/events.md).",
  Public: "Pages a client opens from an email, without an API key (API.md section 9).",
  "Card processor": "Card payments through the card processor (API.md section 9).",
  Service: "Health, this document and its page (API.md section 10).",
} as const;
export type Tag = keyof typeof TAGS;
