import { Hono } from "hono";
import { payLocation } from "@invoicing/core/payments/checkout";
import { refundPayment } from "@invoicing/core/payments/refunds";
import { readJson } from "../body";
import type { AppEnv } from "../env";
import { idParam } from "../params";
import { refundBody } from "../schemas/payments";
import { validate } from "../validation";
import { amountCents, paymentResponse } from "./payments";

/**
 * The routes that talk to the card processor (with routes/webhooks.ts), kept apart from the JSON
 * API's so that they can be served by their own function:
 * - GET /public/invoices/{token}/pay (public): the pay link. 303 to a checkout session for the
 *   current amount due — the open one when the amount is unchanged, else a new one — or to the
 *   user's alternative payment link when no card processor is configured; to the public page once
 *   the invoice is paid or void; 404 like the public page for unknown tokens and drafts.
 * - POST /invoices/{id}/payments/{paymentId}/refund: a card payment refunded through the processor.
 */
export const cardProcessor = new Hono<AppEnv>()
  .get("/public/invoices/:token/pay", async (c) => {
    const location = await payLocation(c.get("deps"), c.req.param("token"));
    return c.body(null, 303, { Location: location, "Cache-Control": "no-store" });
  })
  .post("/invoices/:id/payments/:paymentId/refund", async (c) => {
    const raw = await readJson(c, { optional: true });
    const id = idParam(c);
    const paymentId = idParam(c, "paymentId");
    const body = validate(refundBody, raw);
    const amount = body.amount === undefined ? undefined : amountCents(body.amount);
    return paymentResponse(c, await refundPayment(c.get("ctx"), id, paymentId, amount));
  });
