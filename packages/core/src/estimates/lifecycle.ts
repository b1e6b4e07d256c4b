import { putIfVersion } from "../db/versioning";
import { requireClient } from "../clients/clients";
import type { Ctx } from "../context";
import { nowIso } from "../context";
import { commit, type Write } from "../db/commit";
import { isTransactionConflict } from "../db/errors";
import { nextId } from "../db/ids";
import { transition } from "../db/transition";
import { copyLineItems } from "../documents/line-items";
import { assertExemptionReason, clientCopies, readParties } from "../documents/parties";
import { sellerOf } from "../profile/profile";
import { DomainError, invalidTransition, notFound } from "../errors";
import { queueEmail } from "../email/outbox";
import { EmailQuotaRaced, reserveEmails } from "../email/quota";
import { estimateEmail } from "../email/templates";
import { createInvoiceWrites, newDraftInvoice, type InvoiceItem } from "../invoices/model";
import { getEstimate } from "./estimates";
import {
  CONVERTIBLE_STATUSES,
  estimateKey,
  estimateStatusKeys,
  syncExpiryKeys,
  type EstimateItem,
  type EstimateStatus,
} from "./model";

/**
 * The estimate state machine:
 *   draft → sent → accepted | declined | (expired, by the expire-estimates job);
 *   draft, sent or accepted → converted (creating a draft invoice).
 * Every transition is one conditional write on the current status, so of N concurrent identical
 * transitions exactly one succeeds.
 */
const wrongState = (id: number, action: string) => (current: Record<string, unknown>) =>
  invalidTransition(`estimate ${id}`, String(current.status), action);

const MAX_ATTEMPTS = 10;

export interface SendOptions {
  to?: string;
}

/**
 * draft → sent. The estimate is being issued, so like an invoice's finalize it takes the client's
 * current name and email; the recipient is `to`, else that email (else client_email_missing). A
 * validUntil puts it on the expire-estimates job's list.
 */
export async function sendEstimate(ctx: Ctx, id: number, options: SendOptions = {}): Promise<EstimateItem> {
  for (let attempt = 1; ; attempt++) {
    const estimate = await getEstimate(ctx, id, true);
    if (estimate.status !== "draft") throw wrongState(id, "send")(estimate as unknown as Record<string, unknown>);
    assertExemptionReason(estimate, `estimate ${id}`);
    const { client, profile } = await readParties(ctx, estimate.clientId);
    const clientEmail = client ? (client.email ?? null) : estimate.clientEmail;
    const recipient = options.to ?? clientEmail;
    if (!recipient) {
      throw new DomainError(
        "client_email_missing",
        `estimate ${id} has no recipient: give "to" or set the client's email`,
      );
    }
    const now = nowIso(ctx);
    const quota = await reserveEmails(ctx, ctx.userId, now);
    const next: EstimateItem = {
      ...estimate,
      ...estimateStatusKeys(ctx.userId, "sent", id),
      status: "sent",
      // Issued now: the buyer as the client is now, the seller as the profile is now, both frozen.
      ...(client ? clientCopies(client) : {}),
      seller: sellerOf(profile),
      recipient,
      sentAt: now,
      updatedAt: now,
      version: estimate.version + 1,
    };
    syncExpiryKeys(next);
    const email = queueEmail(ctx, ctx.userId, estimateEmail(ctx, next, recipient), now);
    let raced = false;
    const writes: Write[] = [
      {
        op: putIfVersion(ctx.db.table, next, estimate.version, ["draft"]),
        onConditionFailed: (old) => {
          if (!old) return notFound("estimate", id);
          if (old.status !== "draft") return wrongState(id, "send")(old);
          raced = true; // edited meanwhile: send what it is now
          return new DomainError("service_unavailable", "the estimate is being changed; retry");
        },
      },
      // EMAIL OUTBOX — the estimate email (link to its public page) commits with the send, or not at all.
      email.write,
      quota, // counted with the email it queues (email/quota.ts)
    ];
    try {
      await commit(ctx, writes, next);
      // Delivery is the stream subscriber's: the outbox record's insert triggers it (docs/events.md).
      return next;
    } catch (error) {
      if (!(raced || error instanceof EmailQuotaRaced) || attempt >= MAX_ATTEMPTS) throw error;
    }
  }
}

/** sent → accepted or declined: the client's answer. Either leaves the expiry list. */
function answer(
  ctx: Ctx,
  id: number,
  to: EstimateStatus & ("accepted" | "declined"),
  action: string,
): Promise<EstimateItem> {
  return transition<EstimateItem & Record<string, unknown>>(ctx, {
    kind: "ESTIMATE",
    id,
    from: ["sent"],
    to,
    set: { updatedAt: nowIso(ctx) },
    notFound: () => notFound("estimate", id),
    invalid: wrongState(id, action),
  });
}

export const acceptEstimate = (ctx: Ctx, id: number) => answer(ctx, id, "accepted", "accept");
export const declineEstimate = (ctx: Ctx, id: number) => answer(ctx, id, "declined", "decline");

const alreadyConverted = (id: number, current: Record<string, unknown>) =>
  new DomainError(
    "already_converted",
    `estimate ${id} was already converted to invoice ${String(current.convertedInvoiceId)}`,
  );

const refuseConvert = (id: number) => (current: Record<string, unknown>) =>
  current.status === "converted" ? alreadyConverted(id, current) : wrongState(id, "convert")(current);

/**
 * draft, sent or accepted → converted, creating a draft invoice with the estimate's client,
 * currency, notes, terms and lines (fresh line ids, estimateId set). The invoice, its client
 * reference and the estimate's change are ONE transaction; the estimate's write is conditioned on
 * the version read (so the invoice copies the estimate as it is) and on a convertible status, so of
 * N concurrent converts exactly one commits and the rest find it converted.
 */
export async function convertEstimate(ctx: Ctx, id: number): Promise<InvoiceItem> {
  let invoiceId: number | undefined;
  for (let attempt = 1; ; attempt++) {
    const estimate = await getEstimate(ctx, id, true);
    if (!CONVERTIBLE_STATUSES.includes(estimate.status))
      throw refuseConvert(id)(estimate as unknown as Record<string, unknown>);
    const client = await requireClient(ctx, estimate.clientId);
    // Allocated once: a lost race leaves the id unused, and the retry writes the same one.
    invoiceId ??= await nextId(ctx.db, ctx.userId, "invoice");
    const now = nowIso(ctx);
    const invoice = newDraftInvoice(
      ctx,
      invoiceId,
      client,
      copyLineItems(estimate.lineItems),
      {
        currency: estimate.currency,
        notes: estimate.notes,
        terms: estimate.terms,
        taxExemptionReason: estimate.taxExemptionReason ?? null,
        estimateId: estimate.id,
      },
      now,
    );
    const next: EstimateItem = {
      ...estimate,
      ...estimateStatusKeys(ctx.userId, "converted", id),
      status: "converted",
      convertedInvoiceId: invoice.id,
      updatedAt: now,
      version: estimate.version + 1,
    };
    syncExpiryKeys(next);
    const values: Record<string, unknown> = { ":v": estimate.version };
    const from = CONVERTIBLE_STATUSES.map((status, i) => {
      values[`:s${i}`] = status;
      return `:s${i}`;
    });
    let raced = false;
    try {
      await commit(
        ctx,
        [
          ...createInvoiceWrites(ctx, invoice),
          {
            op: {
              Put: {
                TableName: ctx.db.table,
                Item: next,
                ConditionExpression: `#version = :v AND #status IN (${from.join(", ")})`,
                ExpressionAttributeNames: { "#version": "version", "#status": "status" },
                ExpressionAttributeValues: values,
              },
            },
            onConditionFailed: (old) => {
              if (!old) return notFound("estimate", id);
              if (!CONVERTIBLE_STATUSES.includes(old.status as EstimateStatus)) return refuseConvert(id)(old);
              raced = true; // edited meanwhile: convert what it is now
              return new DomainError("service_unavailable", "the estimate is being changed; retry");
            },
          },
        ],
        invoice,
      );
      return invoice;
    } catch (error) {
      // Concurrent converts also collide as transaction conflicts; reading again settles them.
      if (!(raced || isTransactionConflict(error)) || attempt >= MAX_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
    }
  }
}
