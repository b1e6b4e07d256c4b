import { putIfVersion } from "../db/versioning";
import type { ClientItem } from "../clients/clients";
import { batchGet, batchKey } from "../db/batch-get";
import { assertExemptionReason, clientCopies } from "../documents/parties";
import { profileKey, readProfile, sellerOf } from "../profile/profile";
import type { Ctx } from "../deps";
import { nowIso } from "../deps";
import { commit, type Write } from "../db/commit";
import { takeCounterWrite } from "../db/ids";
import { counterKey, entityKey } from "../db/keys";
import { formatDocumentNumber } from "../documents/numbering";
import { optimistic, Raced } from "../db/optimistic";
import { transition } from "../db/transition";
import { centsOf } from "../money/money";
import { DomainError, invalidTransition, notFound } from "../errors";
import { addDays } from "../time";
import { payLinkForSend } from "./pay-link";
import { sendDocument, type SendOptions, type SendRules } from "../documents/send";
import { invoiceEmail } from "./emails";
import { scheduleReminderWrites } from "./reminders";
import { invoiceKey, type InvoiceItem, type InvoiceStatus } from "./model";

/**
 * The invoice state machine:
 *   draft → finalized → sent → (overdue) → paid;  any but void → void.
 * Every transition is one conditional write on the current status, so of N concurrent identical
 * transitions exactly one succeeds and the others get invalid_transition.
 */
const wrongState = (id: number, action: string) => (current: Record<string, unknown>) =>
  invalidTransition(`invoice ${id}`, String(current.status), action);

const formatInvoiceNumber = (n: number): string => formatDocumentNumber("INV", n);

/**
 * draft → finalized. The invoice number comes from a per-user counter advanced in the SAME
 * transaction as the status change, conditioned on the value read: numbers are gapless, unique and
 * in finalization order, and a draft deleted before finalizing never consumed one. Concurrent
 * finalizes of one user race for that counter in the one optimistic loop, as estimates' and credit
 * notes' numbers do: a finalize that lost the number reads again and takes the next (issue 41
 * measured taking turns on the counter against this and removed it: README, benchmarks).
 */
export async function finalizeInvoice(ctx: Ctx, id: number): Promise<InvoiceItem> {
  // A lost race: the number was taken first, the draft was edited meanwhile, or a transaction
  // conflicted (db/optimistic.ts).
  return optimistic("invoice", async () => finalizeRound(ctx, id, await readForFinalize(ctx, id)));
}

async function finalizeRound(ctx: Ctx, id: number, read: FinalizeRead): Promise<InvoiceItem> {
  const { invoice, client, profile, lastNumber } = read;
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
    takeCounterWrite(ctx, "invoiceNumber", lastNumber, () => new Raced()), // taken first: read again
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

type FinalizeRead = Awaited<ReturnType<typeof readForFinalize>>;

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

const SEND_RULES: SendRules<InvoiceItem> = {
  kind: "INVOICE",
  noun: "invoice",
  from: "finalized",
  // The pay link (docs/payments.md): our own /pay URL, no call to the card processor.
  finish: (ctx, next) => payLinkForSend(ctx, next),
  email: invoiceEmail,
  // The reminder schedule commits with the send, or not at all.
  alsoWrites: scheduleReminderWrites,
};

/**
 * finalized → sent (documents/send.ts): the invoice email, its reminder schedule, and the overdue
 * job's due list at its dueDate (db/keys.ts DUE_LISTS).
 */
export const sendInvoice = (ctx: Ctx, id: number, options: SendOptions = {}): Promise<InvoiceItem> =>
  sendDocument(ctx, SEND_RULES, id, options.to, options.peppol);

// mark-paid is a payment of the whole amount due: payments/payments.ts.

const VOIDABLE: readonly InvoiceStatus[] = ["draft", "finalized", "sent", "paid", "overdue"];

/**
 * any status but void → void. Keeps the invoice number; a voided draft never gets one. Its open
 * checkout session is expired after the write by the stream subscriber (public/checkout.ts).
 */
export async function voidInvoice(ctx: Ctx, id: number): Promise<InvoiceItem> {
  const now = nowIso(ctx);
  const voided = await transition<InvoiceItem & Record<string, unknown>>(ctx, {
    kind: "INVOICE",
    id,
    from: VOIDABLE,
    to: "void",
    set: { updatedAt: now, voidedAt: now },
    notFound: () => notFound("invoice", id),
    invalid: wrongState(id, "void"),
  });
  return voided;
}
