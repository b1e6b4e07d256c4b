/**
 * The document's tags, in the order /docs shows them. A route names its tag in `describe()`
 * (openapi/describe.ts); a tag that is not here does not compile.
 */
export const TAGS = {
  "API keys": "Account settings: the bearer keys of the acting user.",
  Clients: "Who invoices, estimates and schedules bill.",
  Invoices: "Drafts, the lifecycle draft → finalized → sent → paid / overdue / void, reminders and PDFs.",
  Estimates: "Quotes with line items, their lifecycle and conversion to an invoice.",
  "Recurring schedules": "Schedules that generate invoices.",
  Public: "Pages a client opens from an email, without an API key.",
  "Card processor": "Card payments through the card processor.",
  Service: "Health, this document and its page.",
} as const;
export type Tag = keyof typeof TAGS;
