import { Hono } from "hono";
import { payLocation } from "@invoicing/core/payments/checkout";
import type { AppEnv } from "../env";
import { describe } from "../openapi/describe";
import { securityHeaders } from "./public";

/**
 * GET /public/invoices/{token}/pay (public): the pay button's target. 303 to the invoice's card
 * checkout page — a fresh one when the stored session has expired — or to the user's alternative
 * payment link when no card processor is configured; 404 like the public page for unknown tokens
 * and drafts, or when there is no way to pay. Served by the payments function (payments-api.ts),
 * which carries the card processor's SDK; the public pages' security headers apply here too.
 */
export const payments = new Hono<AppEnv>()
  .use("/public/*", securityHeaders)
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
  );
