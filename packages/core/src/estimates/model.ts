import { entityKey, type IndexedItem } from "../db/keys";
import { formatDocumentNumber } from "../documents/numbering";
import type { DocumentItem } from "../documents/item";
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
export const formatEstimateNumber = (n: number): string => formatDocumentNumber("EST", n);
