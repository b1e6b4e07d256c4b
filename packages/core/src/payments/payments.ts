import { batchGet, batchKey } from "../db/batch-get";
import type { Ctx } from "../deps";
import { nowIso } from "../deps";
import { commit, type Write } from "../db/commit";
import { allUserItems, userItems } from "../db/user-items";
import { DomainError, ValidationError, invalidTransition, notFound } from "../errors";
import { getInvoice } from "../invoices/invoices";
import { amountDueCents, invoiceKey, PAYABLE_STATUSES, type InvoiceItem, type PaymentMethod } from "../invoices/model";
import { formatMoney } from "../money/money";
import { countedCents, newPaymentItem, paymentKey, paymentPrefix, type PaymentItem } from "./model";
import { Raced } from "../db/optimistic";
import { invoiceWrite, settledInvoice, takePaymentId, untilSettled } from "./settlement";

/** Manual payments: record (POST …/payments, mark-paid), list, read, delete. Card payments: card-payments.ts. */

interface PaymentInput {
  /** Cents, > 0 (the route's schema refuses anything else). */
  amountCents: bigint;
  paymentMethod: PaymentMethod;
  paidAt?: string;
  reference?: string | null;
}

/**
 * POST /invoices/{id}/payments: a payment of a sent or overdue invoice, at most its amountDue.
 * The payment item and the invoice's new amountPaid (and status, when it completes the invoice) are
 * one transaction conditioned on the invoice's version, so concurrent payments never push amountPaid
 * past total: each decides on the amount due it read, and a loser decides again.
 *
 * The status is checked first (invalid_transition), on the invoice as this request first finds it.
 * A payment that lost its race to payments that completed the invoice meanwhile is an overpayment
 * (its amount no longer fits), not an invalid transition: that is what the payer needs to know.
 */
export async function recordPayment(ctx: Ctx, invoiceId: number, input: PaymentInput): Promise<PaymentItem> {
  const paidAt = checkPaidAt(ctx, input.paidAt);
  const result = await untilSettled(async (round) => {
    const invoice = await getInvoice(ctx, invoiceId, true);
    if (!PAYABLE_STATUSES.includes(invoice.status)) {
      if (round > 1 && invoice.status === "paid") throw overpayment(invoice, input.amountCents);
      throw invalidTransition(`invoice ${invoiceId}`, invoice.status, "record a payment on");
    }
    if (input.amountCents > amountDueCents(invoice)) throw overpayment(invoice, input.amountCents);
    const completion = { paidAt, paymentMethod: input.paymentMethod, reference: input.reference ?? null };
    const next = settledInvoice(ctx, invoice, input.amountCents, completion);
    const id = takePaymentId(invoice, next);
    const payment = manualPayment(ctx, invoice, id, input.amountCents, input.paymentMethod, paidAt, input.reference);
    await commit(ctx, [paymentWrite(ctx, payment), invoiceWrite(ctx, next, invoice.version)], payment);
    return { payment, invoice: next, before: invoice };
  });
  return result.payment;
}

interface MarkPaidInput {
  paymentMethod: PaymentMethod;
  paidAt?: string;
  reference?: string | null;
}

/**
 * POST /invoices/{id}/mark-paid: a payment of the whole amountDue — sent or overdue → paid. Of N
 * concurrent mark-paids one succeeds and the others find the invoice paid: invalid_transition.
 */
export async function markInvoicePaid(ctx: Ctx, invoiceId: number, input: MarkPaidInput): Promise<InvoiceItem> {
  const paidAt = checkPaidAt(ctx, input.paidAt);
  const result = await untilSettled(async () => {
    const invoice = await getInvoice(ctx, invoiceId, true);
    if (!PAYABLE_STATUSES.includes(invoice.status))
      throw invalidTransition(`invoice ${invoiceId}`, invoice.status, "mark paid");
    const due = amountDueCents(invoice);
    const completion = { paidAt, paymentMethod: input.paymentMethod, reference: input.reference ?? null };
    const next = settledInvoice(ctx, invoice, due, completion);
    // A zero total has nothing to pay: the invoice is paid without a payment of 0.00. The payment id
    // is taken from `next` before its write is built (the write holds the item as it is then).
    const payment =
      due > 0n
        ? manualPayment(ctx, invoice, takePaymentId(invoice, next), due, input.paymentMethod, paidAt, input.reference)
        : undefined;
    const writes = [...(payment ? [paymentWrite(ctx, payment)] : []), invoiceWrite(ctx, next, invoice.version)];
    await commit(ctx, writes, next);
    return { invoice: next, before: invoice };
  });
  return result.invoice;
}

/**
 * DELETE /invoices/{id}/payments/{paymentId}: undoes a manual payment recorded by mistake. The item
 * goes and amountPaid shrinks in one transaction; a paid invoice reopens (settlement.ts). Card
 * payments are refunded instead; a void invoice keeps what it has.
 */
export async function deletePayment(ctx: Ctx, invoiceId: number, paymentId: number): Promise<void> {
  await untilSettled(async () => {
    const { invoice, payment } = await readPayment(ctx, invoiceId, paymentId);
    if (payment.source !== "manual") {
      const detail = `payment ${paymentId} came from the card processor: refund it instead`;
      throw new DomainError("payment_not_deletable", detail);
    }
    if (invoice.status === "void") throw invalidTransition(`invoice ${invoiceId}`, "void", "delete a payment of");
    const next = settledInvoice(ctx, invoice, -countedCents(payment));
    await commit(ctx, [
      {
        op: {
          Delete: {
            TableName: ctx.db.table,
            Key: paymentKey(ctx.userId, invoiceId, paymentId),
            ConditionExpression: "attribute_exists(pk)",
          },
        },
        onConditionFailed: () => notFound("payment", paymentId),
      },
      invoiceWrite(ctx, next, invoice.version),
    ]);
  });
}

/** GET /invoices/{id}/payments: oldest first (ids grow with time). Short: not paginated. */
export async function listPayments(ctx: Ctx, invoiceId: number): Promise<PaymentItem[]> {
  await getInvoice(ctx, invoiceId);
  return allUserItems<PaymentItem>(ctx.db, ctx.userId, paymentPrefix(invoiceId));
}

/**
 * The invoice's last payment that counts in its amountPaid (by id: recording order), read
 * consistently; undefined when none does. A credit note that leaves nothing due records its method
 * and reference on the invoice (settlement.ts creditedInvoice).
 */
export async function lastCountedPayment(
  ctx: Ctx,
  invoiceId: number,
): Promise<{ paymentMethod: PaymentMethod; reference: string | null } | undefined> {
  let last: PaymentItem | undefined;
  const payments = userItems<PaymentItem>(ctx.db, ctx.userId, paymentPrefix(invoiceId), { consistent: true });
  for await (const item of payments) if (countedCents(item) > 0n) last = item;
  return last ? { paymentMethod: last.paymentMethod, reference: last.reference } : undefined;
}

export async function getPayment(ctx: Ctx, invoiceId: number, paymentId: number): Promise<PaymentItem> {
  return (await readPayment(ctx, invoiceId, paymentId, false)).payment;
}

/** The invoice and one of its payments in one BatchGetItem; 404 for either missing (invoice first). */
export async function readPayment(
  ctx: Ctx,
  invoiceId: number,
  paymentId: number,
  consistent = true,
): Promise<{ invoice: InvoiceItem; payment: PaymentItem }> {
  const keys = [invoiceKey(ctx.userId, invoiceId), paymentKey(ctx.userId, invoiceId, paymentId)];
  const found = await batchGet(ctx.db, keys, { consistent });
  const invoice = found.get(batchKey(keys[0]!)) as InvoiceItem | undefined;
  if (!invoice) throw notFound("invoice", invoiceId);
  const payment = found.get(batchKey(keys[1]!)) as PaymentItem | undefined;
  if (!payment) throw notFound("payment", paymentId);
  return { invoice, payment };
}

/**
 * The payment item's write: a new id, never overwriting. The id was taken from the invoice as read,
 * so an item already there means a concurrent payment took it first: decide again.
 */
export const paymentWrite = (ctx: Ctx, payment: PaymentItem): Write => ({
  op: { Put: { TableName: ctx.db.table, Item: payment, ConditionExpression: "attribute_not_exists(pk)" } },
  onConditionFailed: () => new Raced(),
});

function manualPayment(
  ctx: Ctx,
  invoice: InvoiceItem,
  id: number,
  amountCents: bigint,
  paymentMethod: PaymentMethod,
  paidAt: string,
  reference: string | null | undefined,
): PaymentItem {
  const facts = { id, currency: invoice.currency, paymentMethod, paidAt, reference: reference ?? null };
  return newPaymentItem(
    ctx.userId,
    invoice.id,
    amountCents,
    { ...facts, source: "manual", status: "succeeded" },
    nowIso(ctx),
  );
}

function checkPaidAt(ctx: Ctx, paidAt: string | undefined): string {
  const now = nowIso(ctx);
  if (paidAt && paidAt > now) throw new ValidationError([{ path: "paidAt", message: "must not be in the future" }]);
  return paidAt ?? now;
}

const overpayment = (invoice: InvoiceItem, amountCents: bigint) =>
  new DomainError(
    "overpayment",
    `a payment of ${formatMoney(amountCents)} is more than invoice ${invoice.id}'s amount due ` +
      `(${formatMoney(amountDueCents(invoice))})`,
  );
