import { randomUUID } from "node:crypto";
import { DeleteCommand, GetCommand, PutCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
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
 * The claim on a user's registration while a PUT or DELETE talks to the provider: an item of its own
 * (sk PEPPOL_REGISTRATION_CLAIM) taken with a conditional write before the first provider call and
 * removed in the same transaction as the registration's write. A second request meanwhile gets 409
 * peppol_registration_in_progress and calls nothing, so two PUTs at once cannot create two legal
 * entities (Storecove's legal entity creation takes no idempotency key). A claim left by a request
 * that died expires after CLAIM_SECONDS, more than the worst case of the provider calls (4 × 10 s);
 * its `expiresAt` is the table's TTL (epoch seconds), so DynamoDB deletes it some time after.
 */
const CLAIM_SECONDS = 60;
const claimKey = (userId: string) => ({ pk: userPk(userId), sk: "PEPPOL_REGISTRATION_CLAIM" });

async function claimRegistration(ctx: Ctx): Promise<string> {
  const token = randomUUID();
  const now = nowIso(ctx);
  const nowSeconds = Math.floor(Date.parse(now) / 1000);
  try {
    await ctx.db.doc.send(
      new PutCommand({
        TableName: ctx.db.table,
        Item: { ...claimKey(ctx.userId), token, expiresAt: nowSeconds + CLAIM_SECONDS },
        // A claim written before the TTL was kept holds its end as an ISO string: compared as one.
        ConditionExpression:
          "attribute_not_exists(pk) OR (attribute_type(expiresAt, :number) AND expiresAt < :nowSeconds) " +
          "OR (attribute_type(expiresAt, :string) AND expiresAt < :nowIso)",
        ExpressionAttributeValues: { ":number": "N", ":string": "S", ":nowSeconds": nowSeconds, ":nowIso": now },
      }),
    );
  } catch (error) {
    if ((error as Error).name !== "ConditionalCheckFailedException") throw error;
    throw new DomainError(
      "peppol_registration_in_progress",
      "another change of the Peppol registration is in progress; retry shortly",
      1,
    );
  }
  return token;
}

/** The claim's check, for a transaction that writes the outcome: only while the claim is still ours. */
const stillClaimed = (ctx: Ctx, token: string) => ({
  Delete: {
    TableName: ctx.db.table,
    Key: claimKey(ctx.userId),
    ConditionExpression: "#token = :token",
    ExpressionAttributeNames: { "#token": "token" },
    ExpressionAttributeValues: { ":token": token },
  },
});

/** Gives the claim back after a failure (a no-op when it expired and another request took it). */
async function releaseClaim(ctx: Ctx, token: string): Promise<void> {
  await ctx.db.doc.send(new DeleteCommand(stillClaimed(ctx, token).Delete)).catch((error: Error) => {
    if (error.name !== "ConditionalCheckFailedException") throw error;
  });
}

/** A transaction that fails because the claim is no longer ours (it expired and was taken over). */
const lostClaim = (error: unknown) =>
  (error as Error).name === "TransactionCanceledException" ||
  (error as Error).name === "ConditionalCheckFailedException";

const inProgress = () =>
  new DomainError(
    "peppol_registration_in_progress",
    "another change of the Peppol registration took over; retry shortly",
    1,
  );

/**
 * PUT /profile/peppol-registration: registers the profile's `peppolId` at the provider. Repeating it
 * changes nothing; a changed `peppolId` replaces the registration (the old one is removed first).
 * Under the claim (above). Once the old one is removed at the provider its record goes too, so
 * when the new registration then fails, GET answers 404 rather than naming a registration that is
 * gone; a failed removal leaves the old registration and its record as they were.
 */
export async function registerPeppol(ctx: Ctx): Promise<PeppolRegistration> {
  const provider = requireProvider(ctx);
  const profile = await getProfile(ctx, true);
  if (!profile.peppolId) {
    throw new DomainError("invalid_transition", "set the profile's peppolId before registering on Peppol");
  }
  const known = await findRegistration(ctx);
  if (known && samePeppolId(known.peppolId, profile.peppolId)) return toRegistration(known);
  if (!profile.address?.country) {
    throw new DomainError("invalid_transition", "set the profile's address before registering on Peppol");
  }
  const token = await claimRegistration(ctx);
  let written = false;
  try {
    // Read again under the claim: a request that held it may have registered meanwhile.
    const current = await findRegistration(ctx);
    if (current && samePeppolId(current.peppolId, profile.peppolId)) return toRegistration(current);
    if (current) {
      await atProvider(() => provider.deregister(current.providerReference, current.peppolId));
      await ctx.db.doc.send(
        new DeleteCommand({
          TableName: ctx.db.table,
          Key: registrationKey(ctx.userId),
          ConditionExpression: "providerReference = :r",
          ExpressionAttributeValues: { ":r": current.providerReference },
        }),
      );
    }
    const registered = await atProvider(() =>
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
    const item: RegistrationItem = {
      ...registrationKey(ctx.userId),
      peppolId: profile.peppolId,
      status: registered.status,
      providerReference: registered.reference,
      updatedAt: nowIso(ctx),
    };
    try {
      await ctx.db.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: ctx.db.table,
                Item: item,
                ConditionExpression: "attribute_not_exists(pk)",
              },
            },
            stillClaimed(ctx, token),
          ],
        }),
      );
      written = true;
    } catch (error) {
      if (!lostClaim(error)) throw error;
      // Another request owns the registration now: ours must not stay at the provider unrecorded.
      await provider.deregister(registered.reference, profile.peppolId).catch(() => undefined);
      throw inProgress();
    }
    return toRegistration(item);
  } finally {
    if (!written) await releaseClaim(ctx, token);
  }
}

/** DELETE /profile/peppol-registration: deregisters at the provider, then forgets it; 404 when none. */
export async function deregisterPeppol(ctx: Ctx): Promise<void> {
  const provider = requireProvider(ctx);
  if (!(await findRegistration(ctx))) throw notFound("Peppol registration");
  const token = await claimRegistration(ctx);
  let written = false;
  try {
    const current = await findRegistration(ctx);
    if (!current) throw notFound("Peppol registration");
    await atProvider(() => provider.deregister(current.providerReference, current.peppolId));
    try {
      await ctx.db.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Delete: {
                TableName: ctx.db.table,
                Key: registrationKey(ctx.userId),
                ConditionExpression: "providerReference = :r",
                ExpressionAttributeValues: { ":r": current.providerReference },
              },
            },
            stillClaimed(ctx, token),
          ],
        }),
      );
      written = true;
    } catch (error) {
      if (!lostClaim(error)) throw error;
      throw inProgress();
    }
  } finally {
    if (!written) await releaseClaim(ctx, token);
  }
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
