import { toAddress, type AddressInput } from "../address/address";
import type { Ctx } from "../deps";
import { nowIso } from "../deps";
import { commit } from "../db/commit";
import { optimistic, Raced } from "../db/optimistic";
import { assertIfMatch, isEmptyPatch } from "../db/versioning";
import { getProfile, type Profile, type ProfileItem } from "./profile";

type ProfilePatch = Partial<Omit<Profile, "hasLogo" | "updatedAt" | "address" | "bankAccount">> & {
  address?: AddressInput | null;
  bankAccount?: { accountName?: string | null; iban: string; bic?: string | null } | null;
};

/**
 * PATCH: the given fields replace the stored ones (`null` clears; an address or bank account is
 * replaced whole); `{}` changes nothing. Written whole, conditioned on the version read (or on the
 * item's absence for the first change), so a concurrent change is never lost: 412 under If-Match,
 * otherwise the patch is applied again to the fresh profile.
 */
export async function updateProfile(ctx: Ctx, patch: ProfilePatch, ifMatch?: string): Promise<ProfileItem> {
  return optimistic(
    "profile",
    async () => {
      const current = await getProfile(ctx, true);
      assertIfMatch(ifMatch, current.version);
      if (isEmptyPatch(patch)) return current;
      const next: ProfileItem = { ...current, updatedAt: nowIso(ctx), version: current.version + 1 };
      for (const [field, value] of Object.entries(patch)) {
        if (value !== undefined) (next as unknown as Record<string, unknown>)[field] = value;
      }
      // Replaced whole, every member present (null when not given).
      if (patch.address) next.address = toAddress(patch.address);
      if (patch.bankAccount) {
        next.bankAccount = {
          accountName: patch.bankAccount.accountName ?? null,
          iban: patch.bankAccount.iban,
          bic: patch.bankAccount.bic ?? null,
        };
      }
      await commit(
        ctx,
        [
          {
            op: {
              Put: {
                TableName: ctx.db.table,
                Item: next,
                ConditionExpression:
                  current.version === 0 ? "attribute_not_exists(pk) OR #version = :v" : "#version = :v",
                ExpressionAttributeNames: { "#version": "version" },
                ExpressionAttributeValues: { ":v": current.version },
              },
            },
            onConditionFailed: () => new Raced(),
          },
        ],
        next,
      );
      return next;
    },
    { ifMatch },
  );
}
