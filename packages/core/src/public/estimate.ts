import { toEstimate, type EstimateItem } from "../estimates/model";
import type { PublicEstimate } from "../estimates/view";

/** The estimate resource plus when it was sent (its date on the page and the PDF). */
export const toPublicEstimate = (item: EstimateItem): PublicEstimate => ({
  ...toEstimate(item),
  sentAt: item.sentAt ?? null,
});
