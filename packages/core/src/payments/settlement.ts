import type { Ctx } from "../deps";
import { nowIso } from "../deps";
import type { Write } from "../db/commit";
import { isDue } from "../db/keys";
import { putIfVersion } from "../db/versioning";
import { optimistic, Raced } from "../db/optimistic";
import { creditedCents, PAYABLE_STATUSES, type InvoiceItem, type PaymentMethod } from "../invoices/model";
import { centsOf, formatMoney } from "../money/money";

/**
 * How an invoice follows its payments and credit notes — the one rule (docs/payments.md and
 * docs/credit-notes.md have the same table). `amountPaid` moves by exactly the amount a payment,
 * deletion or refund adds or takes away, `creditedAmount` by a credit note's total, and
 *   amountDue = max(0, total − amountPaid − creditedAmount);
 * the status follows the amounts —
 *   creditedAmount reaching `total` (wholly credited) → void, `voidedAt` = now (a cancellation; its
 *   payments stay recorded);
 *   payable (PAYABLE_STATUSES: sent, overdue) with amountDue reaching 0 → paid (paidAt,
 *   paymentMethod, paymentReference of the payment that completed it — for a credit note: now, and
 *   the last payment's method and reference, or null when nothing was paid; off the overdue job's
 *   list; pending reminders count as cancelled);
 *   paid with something due again (a payment deleted or refunded) → sent, or overdue when its dueDate
 *   has passed (the paid fields back to null; a sent one back on the overdue list). The reminders
 *   still ahead were never touched (cancellation is read from the invoice's status,
 *   invoices/reminder-model.ts), so they are scheduled again.
 *   void stays void. Everything else keeps its status.
 * The invoice is written whole, conditioned on the version read, in the same transaction as the
 * payment or credit note item: a concurrent payment, credit note, void or overdue run makes the
 * write fail and the use case decides again on the fresh invoice (untilSettled).
 */

interface Completion {
  paidAt: string;
  paymentMethod: PaymentMethod;
  reference: string | null;
}

// max(0, total − amountPaid − creditedAmount): the invoice's derived amountDue, written beside the
// resource it derives (invoices/model.ts), and what every rule here decides on.
export { amountDueCents, creditedCents } from "../invoices/model";

/** The invoice after its amountPaid moved by `delta` cents; `completion` names the payment that may complete it. */
export function settledInvoice(ctx: Ctx, invoice: InvoiceItem, delta: bigint, completion?: Completion): InvoiceItem {
  return settle(ctx, invoice, delta, 0n, completion);
}

/**
 * The invoice after a credit note of `creditCents`: `lastPayment` is the invoice's last counted
 * payment (or undefined when nothing was paid), whose method and reference a credit that leaves
 * nothing due records, as the payment that completed it would have.
 */
export function creditedInvoice(
  ctx: Ctx,
  invoice: InvoiceItem,
  creditCents: bigint,
  lastPayment: Pick<Completion, "paymentMethod" | "reference"> | undefined,
): InvoiceItem {
  const completion = lastPayment
    ? { paidAt: nowIso(ctx), ...lastPayment }
    : { paidAt: nowIso(ctx), paymentMethod: null, reference: null };
  return settle(ctx, invoice, 0n, creditCents, completion);
}

function settle(
  ctx: Ctx,
  invoice: InvoiceItem,
  paidDelta: bigint,
  creditDelta: bigint,
  completion?: Omit<Completion, "paymentMethod"> & { paymentMethod: PaymentMethod | null },
): InvoiceItem {
  const now = nowIso(ctx);
  const paid = centsOf(invoice.amountPaid) + paidDelta;
  const credited = creditedCents(invoice) + creditDelta;
  const next: InvoiceItem = {
    ...invoice,
    amountPaid: formatMoney(paid),
    creditedAmount: formatMoney(credited),
    updatedAt: now,
    version: invoice.version + 1,
  };
  const total = centsOf(invoice.total);
  const complete = paid + credited >= total;
  // The index attributes (the overdue job's due list among them) follow from the status when the
  // invoice is written (putIfVersion).
  if (creditDelta > 0n && credited >= total && invoice.status !== "void") {
    return { ...next, status: "void", voidedAt: now };
  }
  if (PAYABLE_STATUSES.includes(invoice.status) && complete && completion) {
    return {
      ...next,
      status: "paid",
      paidAt: completion.paidAt,
      paymentMethod: completion.paymentMethod,
      paymentReference: completion.reference,
    };
  }
  if (invoice.status === "paid" && !complete) {
    const overdue = invoice.dueDate !== null && isDue("overdue", invoice.dueDate, now);
    return {
      ...next,
      status: overdue ? "overdue" : "sent",
      paidAt: null,
      paymentMethod: null,
      paymentReference: null,
    };
  }
  return next;
}

/**
 * Payment ids are per invoice, like line ids: 1, 2, … in recording order, never reused (a deleted
 * payment's id stays taken). The next one is kept on the invoice (`nextPaymentId`, internal) and
 * advanced in the transaction that records the payment, which is conditioned on the invoice's
 * version anyway: no counter to read or bump, no id skipped by a write that failed.
 */
export function takePaymentId(invoice: InvoiceItem, next: InvoiceItem): number {
  const id = invoice.nextPaymentId ?? 1;
  next.nextPaymentId = id + 1;
  return id;
}

/** The invoice's write, conditioned on the version read; a lost race is `Raced`. */
export const invoiceWrite = (ctx: Ctx, next: InvoiceItem, readVersion: number): Write => ({
  op: putIfVersion(ctx.db.table, next, readVersion),
  onConditionFailed: () => new Raced(),
});

/**
 * Every payment of one invoice goes through its version, so concurrent payments queue on it: each
 * round, one of them wins and the others read again (db/optimistic.ts; a transaction conflict is a
 * lost race too). Past the rounds the answer is 503, and a retry is safe (nothing was written).
 */
export const untilSettled = <T>(run: (round: number) => Promise<T>): Promise<T> => optimistic("invoice", run);
