import * as v from "valibot";
import { ibanProblem, isBic, normalizeIban } from "@invoicing/core/profile/iban";
import { address, peppolId, taxId } from "./address";
import { paymentTermsDays } from "./clients";
import { currency, email, httpsUrlAsGiven, notes } from "./common";

/** PATCH /profile (strict; `null` clears a field; an address or bank account is replaced whole). */
const text = (max: number) =>
  v.optional(v.nullable(v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(max))));

/**
 * A single-line field (API.md section 12): no control characters (U+0000–U+001F, U+007F). The
 * business name goes into email headers (From) and PDF text lines; a line break there is a header
 * injection or a broken line, never a name (issue 29, finding 5).
 */
const singleLine = <S extends v.GenericSchema<string, string>>(schema: S) =>
  v.pipe(schema, v.regex(/^[^\u0000-\u001f\u007f]*$/, "must be one line without control characters"));
const line = (max: number) =>
  v.optional(v.nullable(singleLine(v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(max)))));

const iban = v.pipe(
  v.string(),
  v.maxLength(64),
  v.transform(normalizeIban),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const problem = ibanProblem(dataset.value);
    if (problem) addIssue({ message: `is not a valid IBAN: ${problem}` });
  }),
  v.metadata({ examples: ["DE89 3704 0044 0532 0130 00"] }),
);

const bic = v.pipe(
  v.string(),
  v.transform((value) => value.replace(/ /g, "").toUpperCase()),
  v.check(isBic, "must be a BIC of 8 or 11 characters (ISO 9362)"),
);

const bankAccount = v.strictObject({
  accountName: text(200),
  iban,
  bic: v.optional(v.nullable(bic)),
});

export const updateProfileBody = v.strictObject({
  businessName: line(200),
  legalName: line(200),
  address: v.optional(v.nullable(address)),
  taxId: v.optional(v.nullable(singleLine(taxId))),
  companyId: v.optional(v.nullable(singleLine(taxId))),
  contactName: line(200),
  email: v.optional(v.nullable(email)),
  phone: line(50),
  website: v.optional(v.nullable(v.pipe(httpsUrlAsGiven, v.maxLength(500)))),
  bankAccount: v.optional(v.nullable(bankAccount)),
  defaultCurrency: v.optional(currency),
  defaultPaymentTermsDays: v.optional(paymentTermsDays),
  defaultNotes: v.optional(v.nullable(notes)),
  defaultTerms: v.optional(v.nullable(notes)),
  footer: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(1000)))),
  peppolId: v.optional(v.nullable(peppolId)),
});
