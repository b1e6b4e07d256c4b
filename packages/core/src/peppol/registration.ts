import { DeleteCommand, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import type { Ctx } from "../deps";
import { nowIso } from "../deps";
import { userPk } from "../db/keys";
import { DomainError, notFound } from "../errors";
import { getProfile } from "../profile/profile";
import { samePeppolId } from "./participant-id";
import { type PeppolProvider, PeppolProviderRefused, PeppolProviderUnavailable } from "../capabilities/peppol-provider";

/**
 * The business's registration at the access point provider (API.md section 19): its Peppol
 * identifier registered as a participant that sends and receives invoices. One item per user
 * (sk PEPPOL_REGISTRATION) holding the provider's reference, which never leaves the service.
 */
export interface PeppolRegistration {
  peppolId: string;
  status: "pending" | "active";
  updatedAt: string;
}

interface RegistrationItem extends PeppolRegistration {
  pk: string;
  sk: string;
  /** The provider's id of the registration (Storecove: its legal entity id). */
  providerReference: string;
}

const registrationKey = (userId: string) => ({ pk: userPk(userId), sk: "PEPPOL_REGISTRATION" });

export const toRegistration = (item: PeppolRegistration): PeppolRegistration => ({
  peppolId: item.peppolId,
  status: item.status,
  updatedAt: item.updatedAt,
});

/** The provider the operator configured, or 422 peppol_not_configured. */
export function requireProvider(ctx: { peppol?: PeppolProvider }): PeppolProvider {
  if (!ctx.peppol) {
    throw new DomainError("peppol_not_configured", "no Peppol access point provider is configured (docs/peppol.md)");
  }
  return ctx.peppol;
}

export async function findRegistration(ctx: Pick<Ctx, "db" | "userId">): Promise<RegistrationItem | undefined> {
  const out = await ctx.db.doc.send(
    new GetCommand({ TableName: ctx.db.table, Key: registrationKey(ctx.userId), ConsistentRead: true }),
  );
  return out.Item as RegistrationItem | undefined;
}

/**
 * PUT /profile/peppol-registration: registers the profile's `peppolId` at the provider. Repeating it
 * changes nothing; a changed `peppolId` replaces the registration (the old one is removed first).
 */
export async function registerPeppol(ctx: Ctx): Promise<PeppolRegistration> {
  const provider = requireProvider(ctx);
  const [profile, current] = await Promise.all([getProfile(ctx, true), findRegistration(ctx)]);
  if (!profile.peppolId) {
    throw new DomainError("invalid_transition", "set the profile's peppolId before registering on Peppol");
  }
  if (current && samePeppolId(current.peppolId, profile.peppolId)) return toRegistration(current);
  if (!profile.address?.country) {
    throw new DomainError("invalid_transition", "set the profile's address before registering on Peppol");
  }
  const registered = await atProvider(() => {
    const old = current ? provider.deregister(current.providerReference, current.peppolId) : Promise.resolve();
    return old.then(() =>
      provider.register({
        peppolId: profile.peppolId!,
        name: profile.legalName ?? profile.businessName ?? profile.peppolId!,
        address: {
          line1: profile.address!.line1,
          city: profile.address!.city,
          postalCode: profile.address!.postalCode,
          country: profile.address!.country!,
        },
      }),
    );
  });
  const item: RegistrationItem = {
    ...registrationKey(ctx.userId),
    peppolId: profile.peppolId,
    status: registered.status,
    providerReference: registered.reference,
    updatedAt: nowIso(ctx),
  };
  await ctx.db.doc.send(new PutCommand({ TableName: ctx.db.table, Item: item }));
  return toRegistration(item);
}

/** DELETE /profile/peppol-registration: deregisters at the provider, then forgets it; 404 when none. */
export async function deregisterPeppol(ctx: Ctx): Promise<void> {
  const provider = requireProvider(ctx);
  const current = await findRegistration(ctx);
  if (!current) throw notFound("Peppol registration");
  await atProvider(() => provider.deregister(current.providerReference, current.peppolId));
  await ctx.db.doc
    .send(
      new DeleteCommand({
        TableName: ctx.db.table,
        Key: registrationKey(ctx.userId),
        ConditionExpression: "providerReference = :r",
        ExpressionAttributeValues: { ":r": current.providerReference },
      }),
    )
    .catch((error: Error) => {
      if (error.name !== "ConditionalCheckFailedException") throw error;
    });
}

/**
 * A provider call made inside a request: unreachable is 503 (try again shortly), a refusal is 422
 * with the provider's reason. Never the provider's credentials: its errors name the call and status.
 */
export async function atProvider<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof PeppolProviderUnavailable)
      throw new DomainError(
        "service_unavailable",
        "the Peppol access point provider is unreachable; retry shortly",
        30,
      );
    if (error instanceof PeppolProviderRefused)
      throw new DomainError("invalid_transition", `the Peppol access point provider refused: ${error.message}`);
    throw error;
  }
}
