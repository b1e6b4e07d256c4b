import type { Ctx } from "../context";
import { nowIso } from "../context";
import type { Write } from "../db/commit";
import { putIfVersion } from "../db/versioning";
import { optimistic, Raced } from "../db/optimistic";
import { PAYABLE_STATUSES, type InvoiceItem, type PaymentMethod } from "../invoices/model";
import { centsOf, formatMoney } from "../money/money";

/**
 * How an invoice follows its payments: `amountPaid` moves by exactly the amount a payment, deletion
 * or refund adds or takes away, and the status follows the amount —
 *   payable (PAYABLE_STATUSES: sent, overdue) reaching `total` → paid (paidAt, paymentMethod,
 *   paymentReference of the payment that completed it; off the overdue job's list; pending reminders count as cancelled);
 *   paid falling below `total` → sent, or overdue when its dueDate has passed (the paid fields back
 *   to null; a sent one back on the overdue list). The reminders still ahead were never touched
 *   (cancellation is read from the invoice's status, reminders/model.ts), so they are scheduled again.
 *   void stays void. Everything else keeps its status.
 * The invoice is written whole, conditioned on the version read, in the same transaction as the
 * payment item: a concurrent payment, void or overdue run makes the write fail and the use case
 * decides again on the fresh invoice (untilSettled).
 */

export interface Completion {
  paidAt: string;
  paymentMethod: PaymentMethod;
  reference: string | null;
}

export const amountDueCents = (invoice: Pick<InvoiceItem, "total" | "amountPaid">): bigint =>
  centsOf(invoice.total) - centsOf(invoice.amountPaid);

/** The invoice after its amountPaid moved by `delta` cents; `completion` names the payment that may complete it. */
export function settledInvoice(ctx: Ctx, invoice: InvoiceItem, delta: bigint, completion?: Completion): InvoiceItem {
  const now = nowIso(ctx);
  const paid = centsOf(invoice.amountPaid) + delta;
  const next: InvoiceItem = { ...invoice, amountPaid: formatMoney(paid), updatedAt: now, version: invoice.version + 1 };
  const complete = paid >= centsOf(invoice.total);
  // The index attributes (the overdue job's due list among them) follow from the status when the
  // invoice is written (putIfVersion).
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
    const overdue = invoice.dueDate !== null && invoice.dueDate < now;
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
