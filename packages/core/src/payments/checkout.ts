import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { Ctx, Deps } from "../context";
import { nowIso } from "../context";
import { commit } from "../db/commit";
import { DomainError, notFound } from "../errors";
import type { InvoiceItem } from "../invoices/model";
import { centsOf } from "../money/money";
import { findPublicInvoice } from "../public/documents";
import { CardProcessorError, type CheckoutSession } from "./card-processor";

/**
 * Card checkout sessions for invoices: one is made when an invoice is sent, and the public page's
 * pay button (GET /public/invoices/{token}/pay) replaces it once it has expired — Stripe's sessions
 * live at most 24 hours, an invoice is paid in weeks.
 */

/** The invoice attributes a session fills; the expiry is internal (not in the API's Invoice). */
export interface CardSessionFields {
  cardProcessorPaymentLink: string | null;
  cardProcessorCheckoutSessionId: string | null;
  cardProcessorSessionExpiresAt?: string | null;
}

/** Statuses in which an invoice can be paid, by card as by hand. */
const PAYABLE = ["sent", "overdue"];

/** A session closer to its expiry than this is replaced: the payer needs time to type a card number. */
const MIN_REMAINING_MS = 10 * 60_000;

/**
 * For sendInvoice: the session fields to store with the send, or `{}` (the fields stay null) when no
 * card processor is configured or no session can be made now. A failing card processor never stops
 * an invoice from going out: the pay button makes a session on demand later.
 *
 * `invoice` is the invoice as it is about to be stored (status sent, recipient set). The idempotency
 * key is its id and version: a retried send (a timeout, the API's Idempotency-Key replay after a
 * crash) gets the same session back instead of a second one.
 */
export async function checkoutFieldsForSend(ctx: Ctx, invoice: InvoiceItem): Promise<Partial<CardSessionFields>> {
  if (!ctx.payments) return {};
  try {
    const session = await createSession(ctx, invoice, "send");
    return session ? sessionFields(session) : {};
  } catch (error) {
    if (!(error instanceof CardProcessorError)) throw error;
    warn("no card checkout session on send", ctx.userId, invoice.id, error);
    return {};
  }
}

/**
 * Where the public pay button leads (a 303 target): the invoice's open checkout session, a new one
 * when it has expired, the user's alternative payment link when there is no card processor, or
 * back to the public page when the invoice cannot be paid (finalized, paid, void). 404 for an
 * unknown token or a draft, exactly as the public page.
 */
export async function payLocation(deps: Deps, token: string): Promise<string> {
  let invoice = await findInvoiceByToken(deps, token);
  if (!invoice || invoice.status === "draft") throw notFound("invoice");
  const page = `/public/invoices/${token}`;
  const ctx: Ctx = { ...deps, userId: invoice.userId };

  for (let attempt = 0; attempt < 5; attempt++) {
    if (!PAYABLE.includes(invoice.status)) return page;
    if (!ctx.payments) {
      if (invoice.altProcessorPaymentLink) return invoice.altProcessorPaymentLink;
      throw notFound("payment link");
    }
    const current = await currentSession(ctx, invoice);
    if (current === "complete") return page; // paid, the webhook is on its way
    if (current) return current;

    let session: CheckoutSession | undefined;
    try {
      session = await createSession(ctx, invoice, "pay");
    } catch (error) {
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
    if (await storeSession(ctx, invoice, session)) return session.url!;
    // Changed meanwhile (another click stored its session, or the invoice was paid): look again.
    invoice = await readInvoice(ctx, invoice);
    if (!invoice) throw notFound("invoice");
  }
  throw new DomainError("service_unavailable", "the invoice is changing; retry");
}

/**
 * A checkout session for what is still owed, or undefined when there is nothing to charge or no base
 * URL to come back to. Throws CardProcessorError. The idempotency key names the path and the version
 * the session is made from; each stored session advances the version, so a key is never reused for
 * a different session.
 */
async function createSession(ctx: Ctx, invoice: InvoiceItem, purpose: "send" | "pay"): Promise<CheckoutSession | undefined> {
  const outstanding = centsOf(invoice.total) - centsOf(invoice.amountPaid);
  if (outstanding <= 0n) return undefined;
  if (!ctx.publicBaseUrl) {
    warn("no card checkout session", ctx.userId, invoice.id, new Error("no public base URL for the return pages"));
    return undefined;
  }
  const page = `${ctx.publicBaseUrl.replace(/\/+$/, "")}/public/invoices/${invoice.publicToken}`;
  const session = await ctx.payments!.createCheckoutSession({
    userId: ctx.userId,
    invoiceId: invoice.id,
    invoiceNumber: invoice.invoiceNumber ?? String(invoice.id),
    amountCents: outstanding,
    currency: invoice.currency,
    customerEmail: invoice.recipient ?? invoice.clientEmail,
    successUrl: `${page}?payment=success`,
    cancelUrl: page,
    idempotencyKey: `invoice-checkout:${purpose}:${ctx.userId}:${invoice.id}:v${invoice.version}`,
  });
  if (!session.url) throw new CardProcessorError("rejected", "the checkout session has no URL");
  return session;
}

const sessionFields = (session: CheckoutSession): CardSessionFields => ({
  cardProcessorPaymentLink: session.url,
  cardProcessorCheckoutSessionId: session.id,
  cardProcessorSessionExpiresAt: session.expiresAt,
});

/**
 * The stored session's URL while it can still be paid, "complete" when it has been paid, or
 * undefined when a new one is needed. Our clock rules out the expired ones without a call; for the
 * rest Stripe says whether it is still open (it may have expired early or been paid). If Stripe
 * cannot be asked, the stored link is the best guess.
 */
async function currentSession(ctx: Ctx, invoice: InvoiceItem & CardSessionFields): Promise<string | "complete" | undefined> {
  const { cardProcessorCheckoutSessionId: id, cardProcessorPaymentLink: url, cardProcessorSessionExpiresAt: expiresAt } = invoice;
  if (!id || !url || !expiresAt) return undefined;
  if (Date.parse(expiresAt) - ctx.clock().getTime() < MIN_REMAINING_MS) return undefined;
  try {
    const session = await ctx.payments!.retrieveSession(id);
    if (session.status === "open") return url;
    return session.status === "complete" ? "complete" : undefined;
  } catch (error) {
    if (!(error instanceof CardProcessorError)) throw error;
    warn("checkout session not retrieved", ctx.userId, invoice.id, error);
    return url;
  }
}

/** Stores a new session on the invoice if it is still the version read and still payable. */
async function storeSession(ctx: Ctx, invoice: InvoiceItem, session: CheckoutSession): Promise<boolean> {
  const stale = new Error("stale");
  try {
    const fields = sessionFields(session);
    await commit(ctx, [
      {
        op: {
          Update: {
            TableName: ctx.db.table,
            Key: { pk: invoice.pk, sk: invoice.sk },
            UpdateExpression:
              "SET cardProcessorPaymentLink = :url, cardProcessorCheckoutSessionId = :id, " +
              "cardProcessorSessionExpiresAt = :exp, updatedAt = :now, #version = #version + :one",
            ConditionExpression: "#version = :v AND #status IN (:sent, :overdue)",
            ExpressionAttributeNames: { "#version": "version", "#status": "status" },
            ExpressionAttributeValues: {
              ":url": fields.cardProcessorPaymentLink,
              ":id": fields.cardProcessorCheckoutSessionId,
              ":exp": fields.cardProcessorSessionExpiresAt,
              ":now": nowIso(ctx),
              ":one": 1,
              ":v": invoice.version,
              ":sent": "sent",
              ":overdue": "overdue",
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
  console.warn(JSON.stringify({ level: "warn", message, userId, invoiceId, error: { name: error.name, message: error.message } }));
}
