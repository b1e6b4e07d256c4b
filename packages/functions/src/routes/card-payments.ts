import { Hono } from "hono";
import { listCardPayments } from "@invoicing/core/payments/card-payments";
import type { AppEnv } from "../env";
import { idParam } from "../params";

/**
 * GET /invoices/{id}/card-payments: the payments the card processor reported for an invoice,
 * including those recorded for refund (docs/payments.md). A short list: not paginated. Plain JSON
 * from the table, so the API function serves it; talking to the card processor is the payments
 * function's (routes/payments.ts).
 */
export const cardPayments = new Hono<AppEnv>()
  .get("/invoices/:id/card-payments", async (c) => c.json(await listCardPayments(c.get("ctx"), idParam(c))));
