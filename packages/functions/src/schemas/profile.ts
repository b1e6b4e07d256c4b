import * as v from "valibot";
import { ibanProblem, isBic, normalizeIban } from "@invoicing/core/profile/iban";
import { address, taxId } from "./address";
import { paymentTermsDays } from "./clients";
import { currency, email, httpsUrlAsGiven, notes } from "./common";

/** PATCH /profile (strict; `null` clears a field; an address or bank account is replaced whole). */
const text = (max: number) =>
  v.optional(v.nullable(v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(max))));

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

export const bankAccount = v.strictObject({
  accountName: text(200),
  iban,
  bic: v.optional(v.nullable(bic)),
});

export const updateProfileBody = v.strictObject({
  businessName: text(200),
  legalName: text(200),
  address: v.optional(v.nullable(address)),
  taxId: v.optional(v.nullable(taxId)),
  companyId: v.optional(v.nullable(taxId)),
  contactName: text(200),
  email: v.optional(v.nullable(email)),
  phone: text(50),
  website: v.optional(v.nullable(v.pipe(httpsUrlAsGiven, v.maxLength(500)))),
  bankAccount: v.optional(v.nullable(bankAccount)),
  defaultCurrency: v.optional(currency),
  defaultPaymentTermsDays: v.optional(paymentTermsDays),
  defaultNotes: v.optional(v.nullable(notes)),
  defaultTerms: v.optional(v.nullable(notes)),
  footer: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(1000)))),
});
