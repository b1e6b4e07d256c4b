import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { readAddress } from "../address/address";
import type { Ctx } from "../deps";
import { userPk } from "../db/keys";
import { toResource } from "../resource";
import { Profile, Seller, type BankAccount } from "./resource";

/**
 * The user's business profile: the seller on every invoice and estimate, and the defaults new
 * clients and documents get. Every user has exactly one: before the first change it reads as all
 * nulls with the defaults (USD, 30 days), version 0. One item per user (sk BUSINESS_PROFILE; the
 * item PROFILE is the account record of api-keys.ts); the logo is its own item (profile/logo.ts),
 * so that reading the profile never drags 256 KiB along. This module is the record (its key, how a
 * stored item reads, its defaults), which clients and documents read; changing it is ./update.ts.
 */
export type { BankAccount, Profile, Seller };

export interface ProfileItem extends Profile {
  pk: string;
  sk: string;
  /** 0 until the first change (the ETag "0"). */
  version: number;
}

const DEFAULT_CURRENCY = "USD";
const DEFAULT_PAYMENT_TERMS_DAYS = 30;

export const profileKey = (userId: string) => ({ pk: userPk(userId), sk: "BUSINESS_PROFILE" });

/** The stored item (or nothing) as a whole profile: absent fields null, defaults filled in. */
export function readProfile(userId: string, stored: Record<string, unknown> | undefined): ProfileItem {
  const s = (stored ?? {}) as Partial<ProfileItem>;
  return {
    ...profileKey(userId),
    version: s.version ?? 0,
    businessName: s.businessName ?? null,
    legalName: s.legalName ?? null,
    address: readAddress(s.address),
    taxId: s.taxId ?? null,
    companyId: s.companyId ?? null,
    contactName: s.contactName ?? null,
    email: s.email ?? null,
    phone: s.phone ?? null,
    website: s.website ?? null,
    bankAccount: s.bankAccount ?? null,
    defaultCurrency: s.defaultCurrency ?? DEFAULT_CURRENCY,
    defaultPaymentTermsDays: s.defaultPaymentTermsDays ?? DEFAULT_PAYMENT_TERMS_DAYS,
    defaultNotes: s.defaultNotes ?? null,
    defaultTerms: s.defaultTerms ?? null,
    footer: s.footer ?? null,
    hasLogo: s.hasLogo ?? false,
    peppolId: s.peppolId ?? null,
    updatedAt: s.updatedAt ?? null,
  };
}

export const toProfile = (item: ProfileItem): Profile => toResource(item, Profile);

/** What a document freezes of the profile when it is issued (finalize, an estimate's send). */
export const sellerOf = (profile: Profile): Seller => toResource(profile, Seller);

export async function getProfile(ctx: Pick<Ctx, "db" | "userId">, consistent = false): Promise<ProfileItem> {
  const out = await ctx.db.doc.send(
    new GetCommand({ TableName: ctx.db.table, Key: profileKey(ctx.userId), ConsistentRead: consistent }),
  );
  return readProfile(ctx.userId, out.Item);
}
