import { Hono } from "hono";
import { listCardPayments } from "@invoicing/core/payments/card-payments";
import { payLocation } from "@invoicing/core/payments/checkout";
import type { AppEnv } from "../env";
import { idParam } from "../params";

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
  .get("/public/invoices/:token/pay", async (c) => {
    const location = await payLocation(c.get("deps"), c.req.param("token"));
    return c.body(null, 303, { Location: location, "Cache-Control": "no-store" });
  })
  .get("/invoices/:id/card-payments", async (c) => c.json(await listCardPayments(c.get("ctx"), idParam(c))));
