import type { DocumentView } from "../capabilities/document-view";
import { displayDate, displayMoney } from "../documents/display";
import { commonView, type DocumentAssets } from "../documents/view";
import type { Estimate } from "./model";

/** The estimate fields the views and emails read (the resource plus when it was sent). */
export type PublicEstimate = Pick<
  Estimate,
  | "status"
  | "currency"
  | "subtotal"
  | "taxTotal"
  | "total"
  | "notes"
  | "terms"
  | "validUntil"
  | "clientName"
  | "clientEmail"
  | "lineItems"
  | "createdAt"
  | "taxBreakdown"
  | "taxExemptionReason"
  | "clientAddress"
  | "clientTaxId"
  | "seller"
> & { estimateNumber: string | null; sentAt?: string | null };

export function estimateView(estimate: PublicEstimate, assets: DocumentAssets): DocumentView {
  const money = (amount: string) => displayMoney(amount, estimate.currency);
  return {
    ...commonView(estimate, assets),
    kind: "estimate",
    title: estimate.estimateNumber ? `Estimate ${estimate.estimateNumber}` : "Estimate",
    reference: null,
    memo: null,
    number: estimate.estimateNumber,
    draft: estimate.status === "draft",
    facts: [
      { label: "Estimate no.", value: estimate.estimateNumber ?? "—" },
      { label: "Date", value: displayDate(estimate.sentAt ?? estimate.createdAt) },
      { label: "Valid until", value: displayDate(estimate.validUntil) },
    ],
    totals: [
      { label: "Subtotal", value: money(estimate.subtotal) },
      { label: "Tax", value: money(estimate.taxTotal) },
      { label: "Total", value: money(estimate.total), emphasis: true },
    ],
    payment: null,
    payLink: null,
  };
}
