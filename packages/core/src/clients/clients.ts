import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { Ctx } from "../deps";
import { nowIso } from "../deps";
import { commit, type Write } from "../db/commit";
import { nextId } from "../db/ids";
import { entityKey } from "../db/keys";
import { listEntities, type Page, type PageRequest } from "../db/pagination";
import { assertIfMatch, isEmptyPatch, putIfVersion } from "../db/versioning";
import { DomainError, notFound } from "../errors";
import { readAddress, toAddress, type Address, type AddressInput } from "../address/address";
import { getProfile } from "../profile/profile";
import type { Client } from "./resource";

export type { Client };

export interface ClientItem extends Omit<Client, "address"> {
  /** Structured, or free text stored before addresses were structured (read by readAddress). */
  address: Address | string | null;
  pk: string;
  sk: string;
  version: number;
  /** How many invoices, estimates and schedules reference this client (guards DELETE). */
  refs?: number;
}

interface ClientInput {
  name: string;
  email?: string | null;
  currency?: string;
  paymentTermsDays?: number;
  address?: AddressInput | null;
  taxId?: string | null;
  peppolId?: string | null;
}

type ClientPatch = Partial<ClientInput>;

export const toClient = (item: ClientItem): Client => ({
  id: item.id,
  name: item.name,
  email: item.email ?? null,
  currency: item.currency,
  paymentTermsDays: item.paymentTermsDays,
  address: readAddress(item.address),
  taxId: item.taxId ?? null,
  peppolId: item.peppolId ?? null,
  createdAt: item.createdAt,
  updatedAt: item.updatedAt,
});

export async function createClient(ctx: Ctx, input: ClientInput): Promise<ClientItem> {
  // The profile's defaults apply only to what the request leaves out: read it only then.
  const profile =
    input.currency === undefined || input.paymentTermsDays === undefined ? await getProfile(ctx) : undefined;
  const id = await nextId(ctx.db, ctx.userId, "client");
  const now = nowIso(ctx);
  const item: ClientItem = {
    ...entityKey(ctx.userId, "CLIENT", id),
    id,
    name: input.name,
    email: input.email ?? null,
    currency: input.currency ?? profile!.defaultCurrency,
    paymentTermsDays: input.paymentTermsDays ?? profile!.defaultPaymentTermsDays,
    address: input.address ? toAddress(input.address) : null,
    taxId: input.taxId ?? null,
    peppolId: input.peppolId ?? null,
    createdAt: now,
    updatedAt: now,
    version: 1,
    refs: 0,
  };
  await commit(
    ctx,
    [{ op: { Put: { TableName: ctx.db.table, Item: item, ConditionExpression: "attribute_not_exists(pk)" } } }],
    item,
  );
  return item;
}

export async function findClient(ctx: Ctx, id: number): Promise<ClientItem | undefined> {
  const out = await ctx.db.doc.send(
    new GetCommand({ TableName: ctx.db.table, Key: entityKey(ctx.userId, "CLIENT", id) }),
  );
  return out.Item as ClientItem | undefined;
}

export async function getClient(ctx: Ctx, id: number): Promise<ClientItem> {
  const item = await findClient(ctx, id);
  if (!item) throw notFound("client", id);
  return item;
}

/** For documents naming a client in their body: an unknown client is 422, not 404. */
export async function requireClient(ctx: Ctx, id: number): Promise<ClientItem> {
  const item = await findClient(ctx, id);
  if (!item) throw clientNotFound(id);
  return item;
}

export const clientNotFound = (id: number): DomainError =>
  new DomainError("client_not_found", `client ${id} is not one of your clients`);

export function listClients(ctx: Ctx, page: PageRequest): Promise<Page<ClientItem>> {
  return listEntities<ClientItem>(ctx.db, ctx.userId, "CLIENT", {}, page);
}

export async function updateClient(ctx: Ctx, id: number, patch: ClientPatch, ifMatch?: string): Promise<ClientItem> {
  const current = await getClient(ctx, id);
  assertIfMatch(ifMatch, current.version);
  if (isEmptyPatch(patch)) return current;
  const { address, ...rest } = patch;
  const next: ClientItem = { ...current, ...rest, updatedAt: nowIso(ctx), version: current.version + 1 };
  if (address !== undefined) next.address = address ? toAddress(address) : null;
  await commit(
    ctx,
    [
      {
        op: putIfVersion(ctx.db.table, next, current.version),
        onConditionFailed: (old) =>
          old
            ? new DomainError("precondition_failed", "the client was changed concurrently; fetch it and retry")
            : notFound("client", id),
      },
    ],
    next,
  );
  return next;
}

export async function deleteClient(ctx: Ctx, id: number): Promise<void> {
  await commit(ctx, [
    {
      op: {
        Delete: {
          TableName: ctx.db.table,
          Key: entityKey(ctx.userId, "CLIENT", id),
          ConditionExpression: "attribute_exists(pk) AND (attribute_not_exists(refs) OR refs = :zero)",
          ExpressionAttributeValues: { ":zero": 0 },
        },
      },
      onConditionFailed: (old) =>
        old
          ? new DomainError("client_in_use", `client ${id} is referenced by invoices, estimates or schedules`)
          : notFound("client", id),
    },
  ]);
}

/**
 * The write that counts a document's reference to its client, to put in the document's own
 * transaction: +1 when a document starts naming the client, -1 when it stops. The condition makes a
 * document for a client deleted meanwhile fail as client_not_found instead of dangling.
 * A transaction that adds two documents at once (a schedule with its first invoice) passes 2: a
 * transaction may touch an item only once.
 */
export function clientRefWrite(ctx: Ctx, clientId: number, delta: 1 | -1 | 2): Write {
  return {
    op: {
      Update: {
        TableName: ctx.db.table,
        Key: entityKey(ctx.userId, "CLIENT", clientId),
        UpdateExpression: "ADD refs :d",
        ConditionExpression: "attribute_exists(pk)",
        ExpressionAttributeValues: { ":d": delta },
      },
    },
    onConditionFailed: () => clientNotFound(clientId),
  };
}
