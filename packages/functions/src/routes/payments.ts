import { Hono } from "hono";
import { listCardPayments } from "@invoicing/core/payments/card-payments";
import { payLocation } from "@invoicing/core/payments/checkout";
import type { AppEnv } from "../env";
import { describe, list } from "../openapi/describe";
import { idParam } from "../params";
import { CardPayment } from "../schemas/resources";

/**
 * Card payments around an invoice:
 * - GET /public/invoices/{token}/pay (public): the pay button's target. 303 to the invoice's card
 *   checkout page — a fresh one when the stored session has expired — or to the user's alternative
 *   payment link when no card processor is configured; 404 like the public page for unknown tokens
 *   and drafts, or when there is no way to pay.
 * - GET /invoices/{id}/card-payments: the payments the card processor reported for an invoice,
 *   including those recorded for refund (docs/payments.md). A short list: not paginated.
 */
export const payments = new Hono<AppEnv>()
  .get(
    "/public/invoices/:token/pay",
    describe({
      operationId: "payPublicInvoice",
      tag: "Card processor",
      summary: "The pay button's target",
      description:
        "Redirects to the invoice's card checkout page (a fresh one when the stored session expired), or to its alternative payment link when no card processor is configured. 404 for drafts, unknown tokens, or when there is no way to pay.",
      success: { status: 303, description: "See `Location`.", location: true },
      problems: ["not_found"],
    }),
    async (c) => {
      const location = await payLocation(c.get("deps"), c.req.param("token"));
      return c.body(null, 303, { Location: location, "Cache-Control": "no-store" });
    },
  )
  .get(
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
