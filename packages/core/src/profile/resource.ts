import * as v from "valibot";
import { Address } from "../address/resource";
import { currencyOut, emailOut, nullableText, paymentTermsDaysOut, timestampOut } from "../resource";

/** The business profile's response shapes (see ../resource.ts). */

export const BankAccount = v.strictObject({
  accountName: nullableText,
  iban: v.pipe(v.string(), v.regex(/^[A-Z]{2}\d{2}[A-Z0-9]+$/), v.description("Without spaces, uppercase")),
  bic: nullableText,
});
export type BankAccount = v.InferOutput<typeof BankAccount>;

/** What a document freezes of the profile when it is issued (finalize, an estimate's send). */
export const Seller = v.strictObject({
  businessName: nullableText,
  legalName: nullableText,
  address: v.nullable(Address),
  taxId: nullableText,
  companyId: nullableText,
  contactName: nullableText,
  email: v.nullable(emailOut),
  phone: nullableText,
  website: nullableText,
  bankAccount: v.nullable(BankAccount),
  footer: nullableText,
});
export type Seller = v.InferOutput<typeof Seller>;

export const Profile = v.strictObject({
  ...Seller.entries,
  defaultCurrency: currencyOut,
  defaultPaymentTermsDays: paymentTermsDaysOut,
  defaultNotes: nullableText,
  defaultTerms: nullableText,
  hasLogo: v.boolean(),
  /** The business's Peppol participant identifier (API.md section 19); not part of the seller snapshot. */
  peppolId: nullableText,
  updatedAt: v.nullable(v.pipe(timestampOut, v.description("Null until the profile is first changed"))),
});
export type Profile = v.InferOutput<typeof Profile>;
