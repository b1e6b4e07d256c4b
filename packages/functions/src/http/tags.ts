/**
 * The document's tags, in the order /docs shows them. A route names its tag in `describe()`
 * (http/describe.ts); a tag that is not here does not compile.
 */
export const TAGS = {
  "API keys": "Account settings: the bearer keys of the acting user.",
  Profile: "The user's business: the seller on every document, its logo and the defaults.",
  Clients: "Who invoices, estimates and schedules bill.",
  Invoices: "Drafts, the lifecycle draft → finalized → sent → paid / overdue / void, reminders and PDFs.",
  Estimates: "Quotes with line items, their lifecycle and conversion to an invoice.",
  "Recurring schedules": "Schedules that generate invoices.",
  Email: "What became of the emails sent for the user: failures, bounces, complaints (docs/email-and-public-pages.md).",
  Events:
    "The activity log and webhook endpoints: every change is an event, delivered per Standard Webhooks (docs/events.md).",
  Reports:
    "Who owes what (aging, exact at once) and what was invoiced, credited, collected and charged in tax per month (docs/reports.md).",
  Public: "Pages a client opens from an email, without an API key.",
  "Credit notes":
    "Corrections of an issued invoice (EN 16931 type 381): a partial credit or a full cancellation, numbered CN-000001…",
  Payments: "An invoice's payments: manual and card, partial payments, deletion and card refunds.",
  "Card processor": "Card payments through the card processor.",
  Service: "Health, this document and its page.",
} as const;
export type Tag = keyof typeof TAGS;
