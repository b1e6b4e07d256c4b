import * as v from "valibot";
import { isCountryCode } from "@invoicing/core/address/countries";
import { peppolIdProblem } from "@invoicing/core/peppol/participant-id";

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

/**
 * A Peppol participant identifier, `"<scheme>:<identifier>"` (clients, the profile; API.md section
 * 19): a scheme of Peppol's list and the check that scheme defines (core/src/peppol/participant-id.ts).
 */
export const peppolId = v.pipe(
  v.string(),
  v.maxLength(55),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const problem = peppolIdProblem(dataset.value);
    if (problem) addIssue({ message: `is not a Peppol participant identifier: ${problem}` });
  }),
  v.metadata({ examples: ["0208:0123456749", "9930:DE123456789"] }),
);
