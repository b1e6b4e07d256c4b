import { entityKey, type IndexedItem } from "../db/keys";
import { formatDocumentNumber } from "../documents/numbering";
import { toResource } from "../documents/resource";
import type { DocumentItem } from "../documents/editing";
import type { Address } from "../address/address";
import { readLineItems, taxBreakdown, type LineItem, type TaxBreakdownEntry } from "../documents/line-items";
import type { Seller } from "../profile/profile";

/** The estimate resource and its stored item. */
export const ESTIMATE_STATUSES = ["draft", "sent", "accepted", "declined", "expired", "converted"] as const;
export type EstimateStatus = (typeof ESTIMATE_STATUSES)[number];

/** PATCH applies while the estimate is still an offer; DELETE except once it was taken up. */
export const EDITABLE_STATUSES: readonly EstimateStatus[] = ["draft", "sent"];
export const DELETABLE_STATUSES: readonly EstimateStatus[] = ["draft", "sent", "declined", "expired"];
export const CONVERTIBLE_STATUSES: readonly EstimateStatus[] = ["draft", "sent", "accepted"];

export interface Estimate {
  id: number;
  clientId: number;
  estimateNumber: string;
  status: EstimateStatus;
  currency: string;
  subtotal: string;
  taxTotal: string;
  total: string;
  notes: string | null;
  terms: string | null;
  validUntil: string | null;
  convertedInvoiceId: number | null;
  clientName: string;
  clientEmail: string | null;
  lineItems: LineItem[];
  publicToken: string;
  /** Derived from the lines whenever the estimate is shown; never stored. */
  taxBreakdown: TaxBreakdownEntry[];
  taxExemptionReason: string | null;
  clientAddress: Address | null;
  clientTaxId: string | null;
  /** The business profile as it was at send; null until sent. */
  seller: Seller | null;
  createdAt: string;
  updatedAt: string;
}

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

const ESTIMATE_FIELDS = [
  "id",
  "clientId",
  "estimateNumber",
  "status",
  "currency",
  "subtotal",
  "taxTotal",
  "total",
  "notes",
  "terms",
  "validUntil",
  "convertedInvoiceId",
  "clientName",
  "clientEmail",
  "lineItems",
  "publicToken",
  "taxExemptionReason",
  "clientAddress",
  "clientTaxId",
  "seller",
  "createdAt",
  "updatedAt",
] as const satisfies readonly (keyof Estimate)[];

export const toEstimate = (item: EstimateItem): Estimate => ({
  ...toResource<Estimate>(item, ESTIMATE_FIELDS),
  lineItems: readLineItems(item.lineItems),
  taxBreakdown: taxBreakdown(item.lineItems),
});

export const estimateKey = (userId: string, id: number) => entityKey(userId, "ESTIMATE", id);
export const formatEstimateNumber = (n: number): string => formatDocumentNumber("EST", n);
