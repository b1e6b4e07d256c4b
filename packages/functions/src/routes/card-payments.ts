import { Hono } from "hono";
import { listCardPayments } from "@invoicing/core/payments/card-payments";
import type { AppEnv } from "../env";
import { describe, list } from "../openapi/describe";
import { idParam } from "../params";
import { CardPayment } from "../schemas/resources";

/**
 * GET /invoices/{id}/card-payments: the payments the card processor reported for an invoice,
 * including those recorded for refund (docs/payments.md). A short list: not paginated. Plain JSON
 * from the table, so the API function serves it; talking to the card processor is the payments
 * function's (routes/payments.ts).
 */
export const cardPayments = new Hono<AppEnv>().get(
  "/invoices/:id/card-payments",
  describe({
    operationId: "listInvoiceCardPayments",
    tag: "Card processor",
    summary: "List an invoice's card payments",
    description:
      "What the card processor reported for the invoice, oldest first, including payments that could not be applied (`needs_refund`, with the reason). A short list, not paginated.",
    success: list(CardPayment, "The card payments."),
  }),
  async (c) => c.json(await listCardPayments(c.get("ctx"), idParam(c))),
);
