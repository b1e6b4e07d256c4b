import * as v from "valibot";
import { ESTIMATE_STATUSES } from "@invoicing/core/estimates/model";
import { id, timestamp } from "./common";
import { documentFields, documentListFilters } from "./documents";

const estimateFields = {
  ...documentFields,
  validUntil: v.optional(v.nullable(timestamp)),
};

export const createEstimateBody = v.strictObject({ clientId: id, ...estimateFields });
export const updateEstimateBody = v.strictObject({ clientId: v.optional(id), ...estimateFields });

export const estimateListFilters = documentListFilters(ESTIMATE_STATUSES);

export { sendBody } from "./documents";
