import type { Deps } from "../deps";
import { batchGet, batchKey } from "../db/batch-get";
import { entityKey } from "../db/keys";
import { profileKey } from "../profile/profile";

/** The two parties' Peppol identifiers an e-invoice carries as electronic addresses (BT-34, BT-49). */
export interface PeppolAddresses {
  seller: string | null;
  buyer: string | null;
}

/**
 * The seller's (the profile's) and the buyer's (the client's) Peppol identifiers as they are now,
 * in one round trip. A document's electronic addresses are where it is delivered, not what it
 * says: they are read when the e-invoice is written, so that a business that sets or registers
 * its identifier after finalizing (as `e_invoice_incomplete` tells it to) is reachable at once.
 */
export async function peppolAddresses(
  deps: Pick<Deps, "db">,
  userId: string,
  clientId: number,
): Promise<PeppolAddresses> {
  const keys = [profileKey(userId), entityKey(userId, "CLIENT", clientId)] as const;
  const found = await batchGet(deps.db, keys, { consistent: false });
  const idOf = (key: (typeof keys)[number]) => {
    const value = found.get(batchKey(key))?.peppolId;
    return typeof value === "string" ? value : null;
  };
  return { seller: idOf(keys[0]), buyer: idOf(keys[1]) };
}
