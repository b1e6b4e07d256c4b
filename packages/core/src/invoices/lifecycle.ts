import { putIfVersion } from "../db/versioning";
import { findClient, type ClientItem } from "../clients/clients";
import { batchGet, batchKey } from "../db/batch-get";
import { assertExemptionReason, clientCopies } from "../documents/parties";
import { profileKey, readProfile, sellerOf } from "../profile/profile";
import type { Ctx } from "../context";
import { nowIso } from "../context";
import { commit, type Write } from "../db/commit";
import { counterKey, dueKeys, entityKey } from "../db/keys";
import { formatDocumentNumber, takeNumberWrite } from "../documents/numbering";
import { isTransactionConflict } from "../db/errors";
import { optimistic, Raced } from "../db/optimistic";
import { transition } from "../db/transition";
import { centsOf } from "../money/money";
import { DomainError, invalidTransition, notFound } from "../errors";
import { addDays } from "../time";
import { expireCheckoutSession, payLinkForSend } from "../payments/checkout";
import { queueEmail } from "../email/outbox";
import { EmailQuotaRaced, reserveEmails } from "../email/quota";
import { invoiceEmail } from "../email/templates";
import { scheduleReminderWrites } from "../reminders/reminders";
import { getInvoice } from "./invoices";
import { invoiceKey, invoiceStatusKeys, type InvoiceItem, type InvoiceStatus } from "./model";

/**
 * The invoice state machine:
 *   draft → finalized → sent → (overdue) → paid;  any but void → void.
 * Every transition is one conditional write on the current status, so of N concurrent identical
 * transitions exactly one succeeds and the others get invalid_transition.
 */
const wrongState = (id: number, action: string) => (current: Record<string, unknown>) =>
  invalidTransition(`invoice ${id}`, String(current.status), action);

export const formatInvoiceNumber = (n: number): string => formatDocumentNumber("INV", n);

/**
 * draft → finalized. The invoice number comes from a per-user counter advanced in the SAME
 * transaction as the status change, conditioned on the value read: numbers are gapless, unique and
 * in finalization order, and a draft deleted before finalizing never consumed one.
 */
export async function finalizeInvoice(ctx: Ctx, id: number): Promise<InvoiceItem> {
  // Concurrent finalizes of a user's invoices queue on the number counter: a transaction conflict
  // there is a lost race like a number taken first.
  return optimistic("invoice", () => finalizeRound(ctx, id), { alsoRaced: isTransactionConflict });
}

async function finalizeRound(ctx: Ctx, id: number): Promise<InvoiceItem> {
  const { invoice, client, profile, lastNumber } = await readForFinalize(ctx, id);
  if (invoice.status !== "draft") throw wrongState(id, "finalize")(invoice as unknown as Record<string, unknown>);
  if (invoice.lineItems.length === 0) throw new DomainError("empty_invoice", `invoice ${id} has no line items`);
  if (centsOf(invoice.total) < 0n)
    throw new DomainError("negative_total", `invoice ${id} has a negative total (${invoice.total})`);
  assertExemptionReason(invoice, `invoice ${id}`);

  const now = nowIso(ctx);
  const issueDate = invoice.issueDate ?? now;
  const terms = client?.paymentTermsDays ?? 30;
  const number = lastNumber + 1;
  const next: InvoiceItem = {
    ...invoice,
    ...invoiceStatusKeys(ctx.userId, "finalized", id),
    status: "finalized",
    invoiceNumber: formatInvoiceNumber(number),
    issueDate,
    dueDate: invoice.dueDate ?? addDays(issueDate, terms),
    // Issued now: the buyer as the client is now, the seller as the profile is now, both frozen.
    ...(client ? clientCopies(client) : {}),
    seller: sellerOf(profile),
    updatedAt: now,
    version: invoice.version + 1,
  };
  const writes: Write[] = [
    takeNumberWrite(ctx, "invoiceNumber", lastNumber), // another finalize took this number first: Raced
    {
      op: putIfVersion(ctx.db.table, next, invoice.version, ["draft"]),
      onConditionFailed: (old) => {
        if (!old) return notFound("invoice", id);
        if (old.status !== "draft") return wrongState(id, "finalize")(old);
        return new Raced(); // edited meanwhile: finalize what it is now
      },
    },
  ];
  await commit(ctx, writes, next);
  return next;
}

/**
 * Two reads: the invoice with the user's last invoice number and the profile (one batch), then
 * its client.
 */
async function readForFinalize(ctx: Ctx, id: number) {
  const keys = [invoiceKey(ctx.userId, id), counterKey(ctx.userId, "invoiceNumber"), profileKey(ctx.userId)];
  const first = await batchGet(ctx.db, keys);
  const invoice = first.get(batchKey(keys[0]!)) as InvoiceItem | undefined;
  if (!invoice) throw notFound("invoice", id);
  const clientKey = entityKey(ctx.userId, "CLIENT", invoice.clientId);
  const client = (await batchGet(ctx.db, [clientKey])).get(batchKey(clientKey)) as ClientItem | undefined;
  const counter = first.get(batchKey(keys[1]!));
  return {
    invoice,
    client,
    profile: readProfile(ctx.userId, first.get(batchKey(keys[2]!))),
    lastNumber: Number(counter?.value ?? 0),
  };
}

export interface SendOptions {
  to?: string;
}

/**
 * finalized → sent: records sentAt and the recipient (the `to` given, else the client's email on
 * the invoice), and puts the invoice on the overdue job's due list at its dueDate.
 */
export async function sendInvoice(ctx: Ctx, id: number, options: SendOptions = {}): Promise<InvoiceItem> {
  for (let attempt = 0; ; attempt++) {
    const invoice = await getInvoice(ctx, id, true);
    if (invoice.status !== "finalized") throw wrongState(id, "send")(invoice as unknown as Record<string, unknown>);
    // The client's email as the invoice froze it at finalize; when it had none, the client's current
    // one (an email added to the client later still counts as "the client's email").
    const recipient = options.to ?? invoice.clientEmail ?? (await findClient(ctx, invoice.clientId))?.email;
    if (!recipient) {
      throw new DomainError(
        "client_email_missing",
        `invoice ${id} has no recipient: give "to" or set the client's email`,
      );
    }
    const now = nowIso(ctx);
    // Before anything else happens (a checkout session made): past the quota, send changes nothing.
    const quota = await reserveEmails(ctx, ctx.userId, now);
    const next: InvoiceItem = {
      ...invoice,
      ...invoiceStatusKeys(ctx.userId, "sent", id),
      ...dueKeys("overdue", ctx.userId, invoice.sk, invoice.dueDate!),
      status: "sent",
      sentAt: now,
      recipient,
      updatedAt: now,
      version: invoice.version + 1,
    };
    // The pay link (docs/payments.md): our own /pay URL, no call to the card processor.
    Object.assign(next, payLinkForSend(ctx, next));
    // The invoice email and the reminder schedule commit with the send, or not at all.
    const email = queueEmail(ctx, ctx.userId, invoiceEmail(ctx, next, recipient), now);
    let raced = false;
    try {
      await commit(
        ctx,
        [
          {
            op: putIfVersion(ctx.db.table, next, invoice.version, ["finalized"]),
            onConditionFailed: (old) => {
              if (!old) return notFound("invoice", id);
              if (old.status !== "finalized") return wrongState(id, "send")(old);
              raced = true;
              return new DomainError("service_unavailable", "the invoice is being changed; retry");
            },
          },
          ...scheduleReminderWrites(ctx, next),
          email.write,
          quota,
        ],
        next,
      );
      // Delivery is the stream subscriber's: the outbox record's insert triggers it (docs/events.md).
      return next;
    } catch (error) {
      if (!(raced || error instanceof EmailQuotaRaced) || attempt >= 5) throw error;
    }
  }
}

// mark-paid is a payment of the whole amount due: payments/payments.ts.

const VOIDABLE: readonly InvoiceStatus[] = ["draft", "finalized", "sent", "paid", "overdue"];

/**
 * any status but void → void. Keeps the invoice number; a voided draft never gets one. Its open
 * checkout session is expired afterwards (best effort), so the client cannot pay it any more.
 */
export async function voidInvoice(ctx: Ctx, id: number): Promise<InvoiceItem> {
  const voided = await transition<InvoiceItem & Record<string, unknown>>(ctx, {
    kind: "INVOICE",
    id,
    from: VOIDABLE,
    to: "void",
    set: { updatedAt: nowIso(ctx) },
    notFound: () => notFound("invoice", id),
    invalid: wrongState(id, "void"),
  });
  await expireCheckoutSession(ctx, voided);
  return voided;
}
