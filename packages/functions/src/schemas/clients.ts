import * as v from "valibot";
import { address, peppolId, taxId } from "./address";
import { currency, email } from "./common";

const name = v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(200));
/** Days from issue to due date (also the schedules' override of the client's). */
export const paymentTermsDays = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(365));

export const createClientBody = v.strictObject({
  name,
  email: v.optional(v.nullable(email)),
  currency: v.optional(currency),
  paymentTermsDays: v.optional(paymentTermsDays),
  address: v.optional(v.nullable(address)),
  taxId: v.optional(v.nullable(taxId)),
  peppolId: v.optional(v.nullable(peppolId)),
});

export const updateClientBody = v.strictObject({
  name: v.optional(name),
  email: v.optional(v.nullable(email)),
  currency: v.optional(currency),
  paymentTermsDays: v.optional(paymentTermsDays),
  address: v.optional(v.nullable(address)),
  taxId: v.optional(v.nullable(taxId)),
  peppolId: v.optional(v.nullable(peppolId)),
});
