import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import type { Ctx, Deps } from "../deps";
import { nowIso } from "../deps";
import { commit } from "../db/commit";
import { DomainError, notFound } from "../errors";
import { optimistic, Raced } from "../db/optimistic";
import { amountDueCents, PAYABLE_STATUSES, type InvoiceItem } from "../invoices/model";
import { formatMoney } from "../money/money";
import { findPublicInvoice } from "./documents";
import { publicInvoicePath, publicInvoiceUrl } from "../documents/links";
import { CardProcessorError, type CheckoutSession } from "../capabilities/card-processor";
import { emptyResult, type Worker } from "../queue/port";

/**
 * The pay link (docs/payments.md): `send` never calls the card processor. It stores, as
 * `cardProcessorPaymentLink`, our own link `<public base>/public/invoices/{token}/pay`, which never
 * expires; opening it makes (or reuses) a checkout session for the amount due at that moment.
 * Checkout sessions live at most 24 hours and the amount due changes with every payment, so the
 * session is made on the click, not on send.
 */

/** The invoice attributes of its current session. Only the id is in the API; the rest is internal. */
interface CardSessionFields {
  cardProcessorCheckoutSessionId: string | null;
  /** The session's own URL on the processor (the 303 target). */
  cardProcessorSessionUrl?: string | null;
  cardProcessorSessionExpiresAt?: string | null;
  /** The amount due the session charges: a different amount due needs a new session. */
  cardProcessorSessionAmount?: string | null;
}

/** A session closer to its expiry than this is replaced: the payer needs time to type a card number. */
const MIN_REMAINING_MS = 10 * 60_000;

/**
 * Where the pay link leads (a 303 target): the stored checkout session for the current amount due
 * (no call to the processor), a new one when there is none, it is close to its expiry or the amount
 * due changed; the user's alternative payment
 * link when there is no card processor; the public page when the invoice cannot be paid (finalized,
 * paid, void). 404 for an unknown token or a draft, exactly as the public page.
 */
export async function payLocation(deps: Deps, token: string): Promise<string> {
  const found = await findInvoiceByToken(deps, token);
  if (!found || found.status === "draft") throw notFound("invoice");
  const page = publicInvoicePath(token);
  const ctx: Ctx = { ...deps, userId: found.userId };

  return optimistic("invoice", async (round) => {
    const invoice = round === 1 ? found : await readInvoice(ctx, found);
    if (!invoice) throw notFound("invoice");
    if (!PAYABLE_STATUSES.includes(invoice.status)) return page;
    if (!ctx.payments) {
      if (invoice.altProcessorPaymentLink) return invoice.altProcessorPaymentLink;
      throw notFound("payment link");
    }
    const current = currentSession(ctx, invoice);
    if (current) return current;
    // One call to the processor however many opens race: the open that claims this version makes the
    // session, the others wait for it to be stored, then take it (the next round finds it).
    if (!(await claimSession(ctx, invoice))) return awaitSession(ctx, invoice);

    let session: CheckoutSession | undefined;
    try {
      session = await createSession(ctx, invoice);
    } catch (error) {
      await releaseClaim(ctx, invoice);
      if (!(error instanceof CardProcessorError)) throw error;
      warn("no card checkout session on pay", ctx.userId, invoice.id, error);
      if (error.kind === "rejected" && invoice.altProcessorPaymentLink) return invoice.altProcessorPaymentLink;
      if (error.kind === "rejected") throw notFound("payment link");
      throw new DomainError("service_unavailable", "the card processor is unavailable; retry shortly");
    }
    if (!session) {
      if (invoice.altProcessorPaymentLink) return invoice.altProcessorPaymentLink;
      throw notFound("payment link");
    }
    // The session it replaces (the amount due changed) is expired by the stream subscriber.
    if (await storeSession(ctx, invoice, session)) return session.url!;
    throw new Raced(); // changed meanwhile (another click stored its session, a payment, a void): look again
  });
}

/**
 * The stream subscriber's part (core/src/stream/subscriber.ts, docs/payments.md): when a change of
 * an invoice ends its stored checkout session — the invoice stopped being payable (void, paid) or a
 * new session replaced it (the amount due changed) — that session is expired at the processor, so
 * the client cannot pay it any more. After the write, never within a request: the API function
 * carries no card processor. A payment that still comes through first is recorded as needs_refund.
 *
 * The subscriber only decides (endedSession) and hands the session to the `checkout-expiry` queue;
 * its worker (below) calls the processor, so no processor call holds the stream's shard.
 */
export interface EndedSession extends Record<string, unknown> {
  invoiceId: number;
  sessionId: string;
  /** When the session runs out on its own (then there is nothing to expire). */
  expiresAt: string | null;
}

export function endedSession(
  before: Pick<InvoiceItem, "id" | "status"> & CardSessionFields,
  after: Pick<InvoiceItem, "status"> & CardSessionFields,
): EndedSession | undefined {
  const id = before.cardProcessorCheckoutSessionId;
  if (!id) return undefined;
  const replaced = after.cardProcessorCheckoutSessionId !== id;
  const closed = PAYABLE_STATUSES.includes(before.status) && !PAYABLE_STATUSES.includes(after.status);
  if (!replaced && !closed) return undefined;
  return { invoiceId: before.id, sessionId: id, expiresAt: before.cardProcessorSessionExpiresAt ?? null };
}

/**
 * The `checkout-expiry` queue's worker: expires each ended session at the processor. Idempotent, as
 * a message may come again: a session that is no longer open (expired, paid) is refused by the
 * processor, and that refusal is the outcome wanted; one that ran out on its own is skipped.
 *
 * The processor unavailable (after the SDK's own retry) or refusing: logged and given up, and the
 * session runs out on its own (Stripe's 24 hours); an unexpired session loses nothing (a payment
 * through it is recorded as needs_refund). Any other error, or the deadline, gives the message back
 * to the queue (its redrive policy ends in the dead-letter queue).
 */
export const checkoutExpiryWorker: Worker = async (deps, messages, options = {}) => {
  const result = emptyResult();
  const count = (outcome: string) => (result.tally[outcome] = (result.tally[outcome] ?? 0) + 1);
  for (const message of messages) {
    if (options.deadline !== undefined && Date.now() >= options.deadline) {
      result.retry.push(message);
      continue;
    }
    const session = message.data as EndedSession | undefined;
    if (!deps.payments || !session) {
      count("skipped");
      continue;
    }
    if (session.expiresAt && Date.parse(session.expiresAt) <= deps.clock().getTime()) {
      count("skipped"); // expired on its own
      continue;
    }
    try {
      await deps.payments.expireSession(session.sessionId);
      count("expired");
    } catch (error) {
      if (error instanceof CardProcessorError) {
        // Not open any more (paid, expired), refused for good, or the processor is down (see above).
        warn("checkout session not expired", message.userId, session.invoiceId, error);
        count("refused");
      } else {
        result.retry.push(message);
      }
    }
  }
  return result;
};

/**
 * A checkout session for what is due now, or undefined when nothing is due or there is no base URL
 * to come back to. Throws CardProcessorError. The idempotency key names the version the session is
 * made from; storing it advances the version, and every payment does too, so a key is never reused
 * for another amount — while concurrent clicks on one version get one session.
 */
async function createSession(ctx: Ctx, invoice: InvoiceItem): Promise<CheckoutSession | undefined> {
  const due = amountDueCents(invoice);
  if (due <= 0n) return undefined;
  if (!ctx.publicBaseUrl) {
    warn("no card checkout session", ctx.userId, invoice.id, new Error("no public base URL for the return pages"));
    return undefined;
  }
  const page = publicInvoiceUrl(ctx, invoice.publicToken);
  const session = await ctx.payments!.createCheckoutSession({
    userId: ctx.userId,
    invoiceId: invoice.id,
    invoiceNumber: invoice.invoiceNumber ?? String(invoice.id),
    amountCents: due,
    currency: invoice.currency,
    customerEmail: invoice.recipient ?? invoice.clientEmail,
    successUrl: `${page}?payment=success`,
    cancelUrl: page,
    idempotencyKey: `invoice-checkout:pay:${ctx.userId}:${invoice.id}:v${invoice.version}`,
  });
  if (!session.url) throw new CardProcessorError("rejected", "the checkout session has no URL");
  return session;
}

/**
 * The stored session's URL while it can still be paid for the current amount due, or undefined when
 * a new one is needed — decided from what the invoice stores, WITHOUT asking the processor (issue
 * 29, finding 4): the pay link is public, and asking on every open let one link drive the shared
 * Stripe account into its rate limit for every user. The stored session is reused until
 * MIN_REMAINING_MS before its expiry; the service itself ends a session only by replacing it or by
 * closing its invoice (expireEndedSession), and both change what is stored. A session paid before
 * its webhook arrives leads, for those seconds, to the processor's own page for it (which says it is
 * paid); once the webhook has made the invoice paid, the link leads to the public page.
 */
function currentSession(ctx: Ctx, invoice: InvoiceItem & CardSessionFields): string | undefined {
  const url = invoice.cardProcessorSessionUrl;
  const expiresAt = invoice.cardProcessorSessionExpiresAt;
  if (!invoice.cardProcessorCheckoutSessionId || !url || !expiresAt) return undefined;
  if (invoice.cardProcessorSessionAmount !== formatMoney(amountDueCents(invoice))) return undefined;
  if (Date.parse(expiresAt) - ctx.clock().getTime() < MIN_REMAINING_MS) return undefined;
  return url;
}

/**
 * The claim to make an invoice version's checkout session: an item of its own (not in the user's
 * partition, so no list or backfill ever meets it), put only if absent or abandoned. Without it, ten
 * concurrent first opens made six calls to the processor (issue 38): one session thanks to the
 * idempotency key, but six calls against the account's shared rate limit.
 *
 * Real time, not the business clock: the claim is about how long a call to the processor may take.
 * A claim older than CLAIM_ABANDONED_MS belongs to an open that died (its Lambda timed out) and is
 * taken over; TTL removes claims later (reads never rely on TTL).
 */
const CLAIM_ABANDONED_MS = 30_000;
/** How long a waiting open polls for the session (the processor's worst case is 13 s, stripe.ts). */
const WAIT_FOR_SESSION_MS = 14_000;

const claimKey = (ctx: Ctx, invoice: InvoiceItem) => ({
  pk: `PAYCLAIM#${ctx.userId}#${invoice.id}`,
  sk: `v${invoice.version}`,
});

/** Whether this open claimed the making of the session for the invoice's version. */
async function claimSession(ctx: Ctx, invoice: InvoiceItem): Promise<boolean> {
  const now = Date.now();
  try {
    await ctx.db.doc.send(
      new PutCommand({
        TableName: ctx.db.table,
        Item: { ...claimKey(ctx, invoice), claimedAt: now, expiresAt: Math.ceil(now / 1000) + 3600 },
        ConditionExpression: "attribute_not_exists(pk) OR claimedAt < :abandoned",
        ExpressionAttributeValues: { ":abandoned": now - CLAIM_ABANDONED_MS },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

/** After a failed call: another open may try at once. */
async function releaseClaim(ctx: Ctx, invoice: InvoiceItem): Promise<void> {
  await ctx.db.doc
    .send(new DeleteCommand({ TableName: ctx.db.table, Key: claimKey(ctx, invoice) }))
    .catch(() => undefined);
}

/**
 * Waits for the open that claimed the session: polls the invoice and the claim (consistent reads,
 * backing off to 400 ms) until the invoice changed (its session stored, or a payment or void
 * meanwhile) or the claim was released (that call failed). Either way the next round decides again
 * (Raced). Still claimed after WAIT_FOR_SESSION_MS: 503, retry shortly.
 */
async function awaitSession(ctx: Ctx, invoice: InvoiceItem): Promise<never> {
  const deadline = Date.now() + WAIT_FOR_SESSION_MS;
  for (let pause = 25; Date.now() < deadline; pause = Math.min(400, pause * 2)) {
    await new Promise((resolve) => setTimeout(resolve, pause));
    const [now, claim] = await Promise.all([
      readInvoice(ctx, invoice),
      ctx.db.doc.send(new GetCommand({ TableName: ctx.db.table, Key: claimKey(ctx, invoice), ConsistentRead: true })),
    ]);
    if (!now || now.version !== invoice.version || !claim.Item) throw new Raced();
  }
  throw new DomainError("service_unavailable", "the card checkout session is still being made; retry shortly");
}

/** Stores a new session on the invoice if it is still the version read (so still the amount due) and payable. */
async function storeSession(ctx: Ctx, invoice: InvoiceItem, session: CheckoutSession): Promise<boolean> {
  const stale = new Error("stale");
  const payable = PAYABLE_STATUSES.map((_, i) => `:payable${i}`);
  try {
    await commit(ctx, [
      {
        op: {
          Update: {
            TableName: ctx.db.table,
            Key: { pk: invoice.pk, sk: invoice.sk },
            UpdateExpression:
              "SET cardProcessorSessionUrl = :url, cardProcessorCheckoutSessionId = :id, " +
              "cardProcessorSessionExpiresAt = :exp, cardProcessorSessionAmount = :amount, " +
              "updatedAt = :now, #version = #version + :one",
            ConditionExpression: `#version = :v AND #status IN (${payable.join(", ")})`,
            ExpressionAttributeNames: { "#version": "version", "#status": "status" },
            ExpressionAttributeValues: {
              ":url": session.url,
              ":id": session.id,
              ":exp": session.expiresAt,
              ":amount": formatMoney(amountDueCents(invoice)),
              ":now": nowIso(ctx),
              ":one": 1,
              ":v": invoice.version,
              ...Object.fromEntries(PAYABLE_STATUSES.map((status, i) => [payable[i], status])),
            },
          },
        },
        onConditionFailed: () => stale,
      },
    ]);
    return true;
  } catch (error) {
    if (error === stale) return false;
    throw error;
  }
}

/** The invoice a public token names (see public/documents.ts), read consistently: the index lags. */
async function findInvoiceByToken(deps: Deps, token: string): Promise<InvoiceItem | undefined> {
  const hit = await findPublicInvoice(deps, token);
  return hit ? readInvoice(deps, hit) : undefined;
}

async function readInvoice(deps: Deps, key: { pk: string; sk: string }): Promise<InvoiceItem | undefined> {
  const out = await deps.db.doc.send(
    new GetCommand({ TableName: deps.db.table, Key: { pk: key.pk, sk: key.sk }, ConsistentRead: true }),
  );
  return out.Item as InvoiceItem | undefined;
}

/** Card processor trouble is logged without its details' secrets (CardProcessorError messages carry none). */
function warn(message: string, userId: string, invoiceId: number, error: Error): void {
  const cause = { name: error.name, message: error.message };
  console.warn(JSON.stringify({ level: "warn", message, userId, invoiceId, error: cause }));
}
