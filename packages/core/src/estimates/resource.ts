import * as v from "valibot";
import { documentTail, LineItem, totals } from "../documents/resource";
import { currencyOut, emailOut, idOut, nullableText, publicTokenOut, text, timestampOut } from "../resource";

/** The estimate resource's response shape (see ../resource.ts); model.ts holds the stored item. */
export const ESTIMATE_STATUSES = ["draft", "sent", "accepted", "declined", "expired", "converted"] as const;
export type EstimateStatus = (typeof ESTIMATE_STATUSES)[number];

export const Estimate = v.strictObject({
  id: idOut,
  clientId: idOut,
  estimateNumber: v.pipe(v.string(), v.regex(/^EST-\d{6,}$/), v.description("Assigned at creation")),
  status: v.picklist(ESTIMATE_STATUSES),
  currency: currencyOut,
  ...totals,
  notes: nullableText,
  terms: nullableText,
  validUntil: v.nullable(timestampOut),
  convertedInvoiceId: v.nullable(idOut),
  clientName: text,
  clientEmail: v.nullable(emailOut),
  lineItems: v.array(LineItem),
  publicToken: publicTokenOut,
  taxExemptionReason: nullableText,
  ...documentTail("The business profile as it was at send; null until sent"),
});
export type Estimate = v.InferOutput<typeof Estimate>;
