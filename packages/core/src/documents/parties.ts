import { readAddress, type Address } from "../address/address";
import { clientNotFound, type ClientItem } from "../clients/clients";
import type { Ctx } from "../context";
import { batchGet, batchKey } from "../db/batch-get";
import { entityKey } from "../db/keys";
import { DomainError } from "../errors";
import { profileKey, readProfile, sellerOf, type ProfileItem, type Seller } from "../profile/profile";
import { NEEDS_EXEMPTION_REASON, readLineItems, type LineItem } from "./line-items";

/**
 * The two parties of a document. The buyer's details are copied from the client onto the document
 * (at creation, and again when it is issued); the seller is the business profile, frozen on the
 * document when it is issued (an invoice's finalize, an estimate's send), so later edits of either
 * never change an issued document.
 */
export interface ClientCopies {
  clientName: string;
  clientEmail: string | null;
  clientAddress: Address | null;
  clientTaxId: string | null;
}

export const clientCopies = (client: Pick<ClientItem, "name" | "email" | "address" | "taxId">): ClientCopies => ({
  clientName: client.name,
  clientEmail: client.email ?? null,
  clientAddress: readAddress(client.address),
  clientTaxId: client.taxId ?? null,
});

/** The client (or undefined when deleted meanwhile) and the profile, in one round trip. */
export async function readParties(
  ctx: Ctx,
  clientId: number,
): Promise<{ client: ClientItem | undefined; profile: ProfileItem }> {
  const clientKey = entityKey(ctx.userId, "CLIENT", clientId);
  const found = await batchGet(ctx.db, [clientKey, profileKey(ctx.userId)]);
  return {
    client: found.get(batchKey(clientKey)) as ClientItem | undefined,
    profile: readProfile(ctx.userId, found.get(batchKey(profileKey(ctx.userId)))),
  };
}

/** For a document naming a client in its body: an unknown client is 422 client_not_found. */
export async function requireParties(
  ctx: Ctx,
  clientId: number,
): Promise<{ client: ClientItem; profile: ProfileItem }> {
  const { client, profile } = await readParties(ctx, clientId);
  if (!client) throw clientNotFound(clientId);
  return { client, profile };
}

export const sellerSnapshot = (profile: ProfileItem): Seller => sellerOf(profile);

/**
 * A document with a line that charges no tax for a reason (exempt, reverse charge, …) must state
 * the reason before it is issued: the buyer, and the tax office, need it on the document.
 */
export function assertExemptionReason(
  doc: { taxExemptionReason?: string | null; lineItems: readonly LineItem[] },
  what: string,
): void {
  if (doc.taxExemptionReason) return;
  const line = readLineItems(doc.lineItems).find((l) => NEEDS_EXEMPTION_REASON.includes(l.taxCategory));
  if (line) {
    throw new DomainError(
      "tax_exemption_reason_required",
      `${what} has a ${line.taxCategory} line: set taxExemptionReason (the legal reason no tax is charged)`,
    );
  }
}
