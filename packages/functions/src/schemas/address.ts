import * as v from "valibot";
import { isCountryCode } from "@invoicing/core/address/countries";

/** An `Address` in a request: `country` required and assigned; the rest 1–200 chars or null. */
const part = v.optional(v.nullable(v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(200))));

const country = v.pipe(
  v.string(),
  v.check(isCountryCode, "must be an assigned ISO 3166-1 alpha-2 country code in capitals (DE, US)"),
);

export const address = v.strictObject({
  line1: part,
  line2: part,
  city: part,
  postalCode: part,
  region: part,
  country,
});

/** A VAT or tax number (clients, the profile). */
export const taxId = v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(50));
