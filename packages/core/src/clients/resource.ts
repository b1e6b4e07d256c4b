import * as v from "valibot";
import { Address } from "../address/resource";
import { currencyOut, emailOut, idOut, nullableText, paymentTermsDaysOut, text, timestampOut } from "../resource";

/** The client resource's response shape (see ../resource.ts). */
export const Client = v.strictObject({
  id: idOut,
  name: text,
  email: v.nullable(emailOut),
  currency: currencyOut,
  paymentTermsDays: paymentTermsDaysOut,
  address: v.nullable(Address),
  /** The client's VAT or tax number. */
  taxId: nullableText,
  /** Its Peppol participant identifier (API.md section 19), as stored. */
  peppolId: nullableText,
  createdAt: timestampOut,
  updatedAt: timestampOut,
});
export type Client = v.InferOutput<typeof Client>;
