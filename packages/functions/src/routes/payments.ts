import { Hono, type Context } from "hono";
import { parseMoney } from "@invoicing/core/money/money";
import { toPayment, type PaymentItem } from "@invoicing/core/payments/model";
import { deletePayment, getPayment, listPayments, recordPayment } from "@invoicing/core/payments/payments";
import { readJson } from "../body";
import type { AppEnv } from "../env";
import { idParam } from "../params";
import { createPaymentBody } from "../schemas/payments";
import { validate } from "../validation";

/**
 * An invoice's payments (docs/payments.md): record, list, read, delete a manual one. No card
 * processor here — refunds, which need it, are in routes/card-processor.ts with the other routes
 * that talk to it.
 */
export function paymentResponse(c: Context<AppEnv>, item: PaymentItem, status: 200 | 201 = 200): Response {
  const headers: Record<string, string> = {};
  if (status === 201) headers.Location = `/invoices/${item.invoiceId}/payments/${item.id}`;
  return c.json(toPayment(item), status, headers);
}

/** The amount as validated by the schema (a decimal string or number) in cents. */
export function amountCents(input: string | number): bigint {
  const parsed = parseMoney(input);
  if (!parsed.ok) throw new Error("unreachable: the schema checked the amount");
  return parsed.value;
}

export const payments = new Hono<AppEnv>()
  .post("/invoices/:id/payments", async (c) => {
    const raw = await readJson(c); // 413 → 415 → malformed JSON, then the path id, then the body
    const id = idParam(c);
    const body = validate(createPaymentBody, raw);
    const payment = await recordPayment(c.get("ctx"), id, { ...body, amountCents: amountCents(body.amount) });
    return paymentResponse(c, payment, 201);
  })
  .get("/invoices/:id/payments", async (c) => {
    const items = await listPayments(c.get("ctx"), idParam(c));
    return c.json(items.map(toPayment));
  })
  .get("/invoices/:id/payments/:paymentId", async (c) => {
    const id = idParam(c);
    return paymentResponse(c, await getPayment(c.get("ctx"), id, idParam(c, "paymentId")));
  })
  .delete("/invoices/:id/payments/:paymentId", async (c) => {
    const id = idParam(c);
    await deletePayment(c.get("ctx"), id, idParam(c, "paymentId"));
    return c.body(null, 204);
  });
