import * as v from "valibot";
import { Address } from "../address/resource";
import { Seller } from "../profile/resource";
import { idOut, moneyOut, nullableText, quantityOut, taxRateOut, text, timestampOut } from "../resource";

/** The response pieces invoices, estimates and recurring schedules share (see ../resource.ts). */

/** EN 16931 VAT categories (codes S, Z, E, AE, K, G, O). */
export const TAX_CATEGORIES = [
  "standard",
  "zero_rated",
  "exempt",
  "reverse_charge",
  "intra_community",
  "export",
  "outside_scope",
] as const;
export type TaxCategory = (typeof TAX_CATEGORIES)[number];

/** A line as stored and as returned: every number a formatted decimal string. */
export const LineItem = v.strictObject({
  id: v.pipe(idOut, v.description("Unique within its document, never reused there")),
  description: text,
  quantity: quantityOut,
  unitPrice: moneyOut,
  taxRate: taxRateOut,
  taxCategory: v.picklist(TAX_CATEGORIES),
  amount: v.pipe(moneyOut, v.description("round(quantity × unitPrice) to cents, half away from zero")),
  sortOrder: v.pipe(v.number(), v.integer(), v.minValue(0), v.description("Zero-based position in the array")),
});
export type LineItem = v.InferOutput<typeof LineItem>;

export const totals = {
  subtotal: moneyOut,
  taxTotal: moneyOut,
  total: moneyOut,
};
export type Totals = { [K in keyof typeof totals]: v.InferOutput<(typeof totals)[K]> };

export const TaxBreakdownEntry = v.strictObject({
  taxCategory: v.picklist(TAX_CATEGORIES),
  taxRate: taxRateOut,
  taxableAmount: v.pipe(moneyOut, v.description("Σ amount of the lines of this category and rate")),
  taxAmount: v.pipe(moneyOut, v.description("Σ round(amount × taxRate) of those lines")),
});
export type TaxBreakdownEntry = v.InferOutput<typeof TaxBreakdownEntry>;

/** Derived from the lines whenever a document is shown, never stored; last in every document. */
export const taxBreakdownOut = v.pipe(
  v.array(TaxBreakdownEntry),
  v.description("One entry per (category, rate), by rate descending then category; adds up to subtotal and taxTotal"),
);

/**
 * The fields an invoice and an estimate both end with, in response order: the buyer's copies and the
 * seller's snapshot (`sellerNote` says when it is taken), the timestamps, and the tax breakdown.
 */
export const documentTail = (sellerNote: string) => ({
  clientAddress: v.nullable(Address),
  clientTaxId: nullableText,
  seller: v.nullable(v.pipe(Seller, v.description(sellerNote))),
  createdAt: timestampOut,
  updatedAt: timestampOut,
  taxBreakdown: taxBreakdownOut,
});
