import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { readAddress, type Address } from "../address/address";
import { clientNotFound, type ClientItem } from "../clients/clients";
import type { Ctx } from "../deps";
import { entityKey } from "../db/keys";
import { DomainError } from "../errors";
import { profileKey, readProfile, type ProfileItem } from "../profile/profile";
import { NEEDS_EXEMPTION_REASON, readLineItems, type LineItem } from "./line-items";

/**
 * The two parties of a document. The buyer's details are copied from the client onto the document
 * (at creation, and again when it is issued); the seller is the business profile, frozen on the
 * document when it is issued (an invoice's finalize, an estimate's send), so later edits of either
 * never change an issued document.
 */
interface ClientCopies {
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

/**
 * The client (or undefined when deleted meanwhile) and the profile, in one round trip: two GetItems
 * sent in the same tick, which a request's key-checking db (keys/authorized-db.ts) sends together
 * with the API key and any counters read beside them, as one BatchGetItem.
 */
export async function readParties(
  ctx: Ctx,
  clientId: number,
): Promise<{ client: ClientItem | undefined; profile: ProfileItem }> {
  const get = (Key: { pk: string; sk: string }) =>
    ctx.db.doc.send(new GetCommand({ TableName: ctx.db.table, Key, ConsistentRead: true }));
  const [client, profile] = await Promise.all([
    get(entityKey(ctx.userId, "CLIENT", clientId)),
    get(profileKey(ctx.userId)),
  ]);
  return { client: client.Item as ClientItem | undefined, profile: readProfile(ctx.userId, profile.Item) };
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
