import { putIfVersion } from "../db/versioning";
import { requireClient } from "../clients/clients";
import type { Ctx } from "../deps";
import { nowIso } from "../deps";
import { commit } from "../db/commit";
import { nextId } from "../db/ids";
import { optimistic, Raced } from "../db/optimistic";
import { transition } from "../db/transition";
import { copyLineItems } from "../documents/line-items";
import { assertExemptionReason, clientCopies, readParties } from "../documents/parties";
import { sellerOf } from "../profile/profile";
import { sendDocument, type SendOptions, type SendRules } from "../documents/send";
import { DomainError, invalidTransition, notFound } from "../errors";
import { estimateEmail } from "./emails";
import { createInvoiceWrites, newDraftInvoice, type InvoiceItem } from "../invoices/model";
import { getEstimate } from "./estimates";
import { CONVERTIBLE_STATUSES, type EstimateItem, type EstimateStatus } from "./model";

/**
 * The estimate state machine:
 *   draft → sent → accepted | declined | (expired, by the expire-estimates job);
 *   draft, sent or accepted → converted (creating a draft invoice).
 * Every transition is one conditional write on the current status, so of N concurrent identical
 * transitions exactly one succeeds.
 */
const wrongState = (id: number, action: string) => (current: Record<string, unknown>) =>
  invalidTransition(`estimate ${id}`, String(current.status), action);

const SEND_RULES: SendRules<EstimateItem> = {
  kind: "ESTIMATE",
  noun: "estimate",
  from: "draft",
  // The estimate is being issued, so like an invoice's finalize: the buyer as the client is now, the
  // seller as the profile is now, both frozen.
  issue: async (ctx, estimate) => {
    assertExemptionReason(estimate, `estimate ${estimate.id}`);
    const { client, profile } = await readParties(ctx, estimate.clientId);
    return { ...(client ? clientCopies(client) : {}), seller: sellerOf(profile) };
  },
  email: estimateEmail,
};

/**
 * draft → sent (documents/send.ts), to the client's current email unless `to` is given. A
 * validUntil puts it on the expire-estimates job's list (db/keys.ts DUE_LISTS).
 */
export const sendEstimate = (ctx: Ctx, id: number, options: SendOptions = {}): Promise<EstimateItem> =>
  sendDocument(ctx, SEND_RULES, id, options.to);

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
  const round = async (): Promise<InvoiceItem> => {
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
      status: "converted",
      convertedInvoiceId: invoice.id,
      updatedAt: now,
      version: estimate.version + 1,
    };
    await commit(
      ctx,
      [
        ...createInvoiceWrites(ctx, invoice),
        {
          op: putIfVersion(ctx.db.table, next, estimate.version, CONVERTIBLE_STATUSES),
          onConditionFailed: (old) => {
            if (!old) return notFound("estimate", id);
            if (!CONVERTIBLE_STATUSES.includes(old.status as EstimateStatus)) return refuseConvert(id)(old);
            return new Raced(); // edited meanwhile: convert what it is now
          },
        },
      ],
      invoice,
    );
    return invoice;
  };
  // Concurrent converts also collide as transaction conflicts; reading again settles them.
  return optimistic("estimate", round);
}
