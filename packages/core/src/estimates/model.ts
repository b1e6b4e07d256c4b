import { dueKeys, entityKey, statusIndexKeys, type IndexedItem } from "../db/keys";
import { formatDocumentNumber } from "../documents/numbering";
import type { DocumentItem } from "../documents/editing";
import { readLineItems, taxBreakdown } from "../documents/line-items";
import { toResource } from "../resource";
import { Estimate, type EstimateStatus } from "./resource";

/** The estimate's stored item; the resource's shape is its response schema (./resource.ts). */
export { ESTIMATE_STATUSES } from "./resource";
export type { Estimate, EstimateStatus };

/** PATCH applies while the estimate is still an offer; DELETE except once it was taken up. */
export const EDITABLE_STATUSES: readonly EstimateStatus[] = ["draft", "sent"];
export const DELETABLE_STATUSES: readonly EstimateStatus[] = ["draft", "sent", "declined", "expired"];
export const CONVERTIBLE_STATUSES: readonly EstimateStatus[] = ["draft", "sent", "accepted"];

export interface EstimateItem extends Omit<Estimate, "taxBreakdown">, DocumentItem, IndexedItem {
  /** Tells estimates from invoices where both meet (the byToken index of the public pages). */
  kind: "estimate";
  version: number;
  status: EstimateStatus;
  /** Where send delivered the estimate (the `to` of send, else the client's email). */
  recipient?: string | null;
  /** When it was sent: not part of the resource, shown as its date on the public page. */
  sentAt?: string | null;
  /** On the expire-estimates job's list while sent with a validUntil. */
}

export const toEstimate = (item: EstimateItem): Estimate => ({
  ...toResource(item, Estimate),
  lineItems: readLineItems(item.lineItems),
  taxBreakdown: taxBreakdown(item.lineItems),
});

export const estimateKey = (userId: string, id: number) => entityKey(userId, "ESTIMATE", id);
export const estimateStatusKeys = (userId: string, status: EstimateStatus, id: number) =>
  statusIndexKeys(userId, "ESTIMATE", status, id);
export const formatEstimateNumber = (n: number): string => formatDocumentNumber("EST", n);

/**
 * The expiry keys of a sent estimate: on the expire-estimates job's list at its validUntil, or on no
 * list without one. Spread over the item, or removed, whenever status or validUntil changes.
 */
export function expiryKeys(
  item: Pick<EstimateItem, "userId" | "sk" | "validUntil">,
): { duePk: string; dueSk: string } | undefined {
  return item.validUntil ? dueKeys("expire-estimates", item.userId, item.sk, item.validUntil) : undefined;
}

/** Puts a sent estimate on, or takes it off, the expiry list to match its current validUntil. */
export function syncExpiryKeys(item: EstimateItem): void {
  const keys = item.status === "sent" ? expiryKeys(item) : undefined;
  if (keys) Object.assign(item, keys);
  else {
    delete item.duePk;
    delete item.dueSk;
  }
}
