import { Hono, type Context } from "hono";
import { parseMoney } from "@invoicing/core/money/money";
import { toPayment, type PaymentItem } from "@invoicing/core/payments/model";
import { deletePayment, getPayment, listPayments, recordPayment } from "@invoicing/core/payments/payments";
import type { AppEnv } from "../http/app-env";
import { deleted, describe, list } from "../http/describe";
import { idParam } from "../http/params";
import { createPaymentBody } from "../schemas/payments";
import { Payment } from "../schemas/resources";
import { jsonBody } from "../http/validators";

/**
 * An invoice's payments (docs/payments.md): record, list, read, delete a manual one. Nothing here
 * talks to the card processor: the refund, which does, is in routes/card-processor.ts with the
 * other routes that need it.
 */
export function paymentResponse(c: Context<AppEnv>, item: PaymentItem, status: 200 | 201 = 200) {
  const headers: Record<string, string> = {};
  if (status === 201) headers.Location = `/invoices/${item.invoiceId}/payments/${item.id}`;
  return c.json(toPayment(item), status, headers);
}

/** An amount the schema has checked (a decimal string or number), in cents. */
export function amountCents(input: string | number): bigint {
  const parsed = parseMoney(input);
  if (!parsed.ok) throw new Error("unreachable: the schema checked the amount");
  return parsed.value;
}

const tag = "Payments";

export const payments = new Hono<AppEnv>()
  .post(
    "/invoices/:id/payments",
    describe({
      operationId: "createInvoicePayment",
      tag,
      summary: "Record a payment",
      description:
        "Sent or overdue invoices only (else `invalid_transition`, checked first). `amount` > 0 and ≤ `amountDue` (else `overpayment`); `paidAt` defaults to now (a future one is a 400). `amountPaid` grows by `amount` in the same atomic step; reaching `total` makes the invoice paid (its `paidAt`, `paymentMethod`, `paymentReference` are this payment's) and cancels pending reminders. A payment that loses a race to payments that filled the invoice is an `overpayment`.",
      success: { status: 201, description: "The payment.", schema: Payment, location: true },
      problems: ["invalid_transition", "overpayment"],
    }),
    jsonBody(createPaymentBody),
    async (c) => {
      const body = c.req.valid("json");
      const payment = await recordPayment(c.get("ctx"), idParam(c), { ...body, amountCents: amountCents(body.amount) });
      return paymentResponse(c, payment, 201);
    },
  )
  .get(
    "/invoices/:id/payments",
    describe({
      operationId: "listInvoicePayments",
      tag,
      summary: "List an invoice's payments",
      description:
        "Oldest first, manual and card processor payments alike, `needs_refund` ones included (never counted in `amountPaid`). A short list, not paginated.",
      success: list(Payment, "The payments."),
    }),
    async (c) => c.json((await listPayments(c.get("ctx"), idParam(c))).map(toPayment)),
  )
  .get(
    "/invoices/:id/payments/:paymentId",
    describe({
      operationId: "getInvoicePayment",
      rebuilds: "PAYMENT",
      tag,
      summary: "Get a payment",
      success: { status: 200, description: "The payment.", schema: Payment },
    }),
    async (c) => {
      const id = idParam(c);
      return paymentResponse(c, await getPayment(c.get("ctx"), id, idParam(c, "paymentId")));
    },
  )
  .delete(
    "/invoices/:id/payments/:paymentId",
    describe({
      operationId: "deleteInvoicePayment",
      tag,
      summary: "Delete a manual payment",
      description:
        "Undoes a manual payment recorded by mistake: `amountPaid` shrinks; a paid invoice returns to sent, or overdue when its `dueDate` has passed, and its reminders still ahead are scheduled again. A card processor payment is refunded instead (`payment_not_deletable`); a void invoice keeps its payments (`invalid_transition`).",
      success: deleted,
      problems: ["payment_not_deletable", "invalid_transition"],
    }),
    async (c) => {
      const id = idParam(c);
      await deletePayment(c.get("ctx"), id, idParam(c, "paymentId"));
      return c.body(null, 204);
    },
  );
