import type { Ctx } from "../context";
import { nowIso } from "../context";
import type { Write } from "../db/commit";
import { isTransactionConflict } from "../db/errors";
import { dueKeys } from "../db/keys";
import { putIfVersion } from "../db/versioning";
import { DomainError } from "../errors";
import { invoiceStatusKeys, type InvoiceItem, type PaymentMethod } from "../invoices/model";
import { centsOf, formatMoney } from "../money/money";

/**
 * How an invoice follows its payments: `amountPaid` moves by exactly the amount a payment, deletion
 * or refund adds or takes away, and the status follows the amount —
 *   sent/overdue reaching `total` → paid (paidAt, paymentMethod, paymentReference of the payment
 *   that completed it; off the overdue job's list; pending reminders count as cancelled);
 *   paid falling below `total` → sent, or overdue when its dueDate has passed (the paid fields back
 *   to null; a sent one back on the overdue list). The reminders still ahead were never touched
 *   (cancellation is read from the invoice's status, reminders/model.ts), so they are scheduled again.
 *   void stays void. Everything else keeps its status.
 * The invoice is written whole, conditioned on the version read, in the same transaction as the
 * payment item: a concurrent payment, void or overdue run makes the write fail and the use case
 * decides again on the fresh invoice (untilSettled).
 */
export const PAYABLE: readonly string[] = ["sent", "overdue"];

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
  if (PAYABLE.includes(invoice.status) && complete && completion) {
    delete next.duePk;
    delete next.dueSk;
    return {
      ...next,
      ...invoiceStatusKeys(ctx.userId, "paid", invoice.id),
      status: "paid",
      paidAt: completion.paidAt,
      paymentMethod: completion.paymentMethod,
      paymentReference: completion.reference,
    };
  }
  if (invoice.status === "paid" && !complete) {
    const overdue = invoice.dueDate !== null && invoice.dueDate < now;
    const reopened: InvoiceItem = {
      ...next,
      ...invoiceStatusKeys(ctx.userId, overdue ? "overdue" : "sent", invoice.id),
      status: overdue ? "overdue" : "sent",
      paidAt: null,
      paymentMethod: null,
      paymentReference: null,
    };
    if (!overdue && invoice.dueDate) {
      Object.assign(reopened, dueKeys("overdue", ctx.userId, invoice.sk, invoice.dueDate));
    }
    return reopened;
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

/** A use case's decision was made on an invoice that has changed since: decide again. */
export class Raced extends Error {
  constructor() {
    super("the invoice changed meanwhile");
  }
}

/** The invoice's write, conditioned on the version read; a lost race is `Raced`. */
export const invoiceWrite = (ctx: Ctx, next: InvoiceItem, readVersion: number): Write => ({
  op: putIfVersion(ctx.db.table, next, readVersion),
  onConditionFailed: () => new Raced(),
});

/**
 * Every payment of one invoice goes through its version, so concurrent payments queue on it: each
 * round, one of them wins and the others read again. Enough rounds for a few dozen concurrent
 * payments on one invoice (the losers back off with jitter); past them the answer is 503, and a
 * retry is safe (nothing was written).
 */
const MAX_ROUNDS = 40;

export async function untilSettled<T>(run: (round: number) => Promise<T>): Promise<T> {
  for (let round = 0; ; round++) {
    try {
      return await run(round);
    } catch (error) {
      const raced = error instanceof Raced || isTransactionConflict(error);
      if (!raced) throw error;
      if (round + 1 >= MAX_ROUNDS) throw new DomainError("service_unavailable", "the invoice is being changed; retry");
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(100, 5 * 2 ** round)));
    }
  }
}
