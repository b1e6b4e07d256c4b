import type { Deps } from "../deps";
import { batchGet, batchKey } from "../db/batch-get";
import type { Logo } from "../profile/image";
import { documentLogo, logoKey } from "../profile/logo";
import { profileKey, readProfile, sellerOf, type Seller } from "../profile/profile";
import type { DocumentAssets } from "../documents/view";

/**
 * The seller and logo a document is drawn with, in one round trip: the seller frozen on the
 * document when it was issued, else (a draft, or a document issued before sellers were frozen)
 * the current profile; the current logo (the profile's logo is shown on every document).
 */
export async function documentAssets(
  deps: Pick<Deps, "db">,
  userId: string,
  doc: { seller?: Seller | null },
): Promise<DocumentAssets> {
  const keys = [profileKey(userId), logoKey(userId)];
  const found = await batchGet(deps.db, doc.seller ? [keys[1]!] : keys);
  const logoItem = found.get(batchKey(keys[1]!));
  const logo: Logo | null = logoItem ? documentLogo(logoItem) : null;
  const seller = doc.seller ?? sellerOf(readProfile(userId, found.get(batchKey(keys[0]!))));
  return { seller, logo };
}
