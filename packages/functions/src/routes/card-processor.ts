import { Hono } from "hono";
import { payLocation } from "@invoicing/core/public/checkout";
import { refundPayment } from "@invoicing/core/payments/refunds";
import type { AppEnv } from "../http/app-env";
import { describe } from "../http/describe";
import { idParam } from "../http/params";
import { refundBody } from "../schemas/payments";
import { Payment } from "../schemas/resources";
import { jsonBody } from "../http/validators";
import { verifiedKey } from "../http/middleware";
import { amountCents, paymentResponse } from "./payments";
import { securityHeaders } from "./public/headers";

/**
 * The routes that talk to the card processor (with routes/webhooks.ts), kept apart from the JSON
 * API's so that they can be served by a function of their own. Core reaches the processor only
 * through `Deps.payments` (the Stripe SDK is loaded at its first call, payments/stripe.ts). The
 * pay link is a public page's button: it gets the public pages' security headers here too, as the
 * payments function serves it without the public pages' module.
 */
export const cardProcessor = new Hono<AppEnv>()
  .use("/public/*", securityHeaders)
  .get(
    "/public/invoices/:token/pay",
    describe({
      operationId: "payPublicInvoice",
      tag: "Card processor",
      summary: "The pay link",
      description:
        "What `cardProcessorPaymentLink` points at; it never expires. Redirects to a checkout session for the current `amountDue` — the open one when the amount is unchanged, else a new one (its id becomes `cardProcessorCheckoutSessionId`) — or to the alternative payment link when no card processor is configured; a paid or void invoice redirects to its public page. 404 for drafts, unknown tokens, or when there is no way to pay.",
      success: { status: 303, description: "See `Location`.", location: true },
      problems: ["not_found"],
    }),
    async (c) => {
      const location = await payLocation(c.get("deps"), c.req.param("token"));
      return c.body(null, 303, { Location: location, "Cache-Control": "no-store" });
    },
  )
  .post(
    "/invoices/:id/payments/:paymentId/refund",
    describe({
      operationId: "refundInvoicePayment",
      tag: "Payments",
      summary: "Refund a card payment",
      description:
        "Card processor payments only: refunds `amount` (default: all not yet refunded) through the card processor, then records it (`refundedAmount`; `status` `refunded` when whole). A refunded `succeeded` payment lowers `amountPaid` as a deletion does; a `needs_refund` one changes no amount. A retry after a failure never refunds twice (docs/payments.md).",
      success: { status: 200, description: "The payment after the refund.", schema: Payment },
      problems: ["refund_not_possible"],
    }),
    jsonBody(refundBody, { emptyAsObject: true }),
    async (c) => {
      const { amount } = c.req.valid("json");
      const id = idParam(c);
      // The refund moves money before our write: only once the key is good and the request has its
      // rate-limit place, so a 429 or 401 answer leaves nothing done at the processor either.
      await verifiedKey(c);
      const payment = await refundPayment(
        c.get("ctx"),
        id,
        idParam(c, "paymentId"),
        amount === undefined ? undefined : amountCents(amount),
      );
      return paymentResponse(c, payment);
    },
  );
