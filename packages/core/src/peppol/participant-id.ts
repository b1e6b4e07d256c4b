import { ibanProblem } from "../profile/iban";

/**
 * Peppol participant identifiers (API.md section 19): `"<scheme>:<identifier>"`, the address a
 * business receives e-invoices at on the Peppol network and the electronic address (BT-34, BT-49)
 * its e-invoices carry. `scheme` is an ISO 6523 ICD code of Peppol's participant identifier scheme
 * list (Peppol BIS Billing 3.0's "Electronic Address Scheme" code list, release 3.0.19, which the
 * official PEPPOL-EN16931 rules check as PEPPOL-EN16931-CL008). Where a scheme defines a check
 * (a check digit, a VAT number's country prefix and shape) it is applied here, so that an identifier
 * the API accepts never fails the official rules later (PEPPOL-COMMON-R040 … R050). Compared
 * case-insensitively (Peppol identifiers are); stored and returned as given.
 */

/** The active schemes of the code list (deprecated and removed ones, 9901 or 9956, are refused). */
export const PEPPOL_SCHEMES: ReadonlySet<string> = new Set(
  (
    "0002 0007 0009 0037 0060 0088 0096 0097 0106 0130 0135 0142 0147 0151 0154 0158 0170 0177 0183 " +
    "0184 0188 0190 0191 0192 0193 0194 0195 0196 0198 0199 0200 0201 0202 0203 0204 0205 0208 0209 " +
    "0210 0211 0212 0213 0215 0216 0217 0218 0221 0225 0230 0235 0240 9910 9913 9914 9915 9918 9919 " +
    "9920 9922 9923 9924 9925 9926 9927 9928 9929 9930 9931 9932 9933 9934 9935 9936 9937 9938 9939 " +
    "9940 9941 9942 9943 9944 9945 9946 9947 9948 9949 9950 9951 9952 9953 9957 9959"
  ).split(" "),
);

/**
 * The `99xx` schemes that are a country's VAT number, with the prefixes that number starts with
 * (Greece's is EL; Monaco's VAT numbers are French ones) and, for the EU and a few others, the
 * shape of what follows the prefix (the VIES formats).
 */
const VAT_SCHEMES: Record<string, { prefixes: string[]; shape: RegExp }> = {
  "9910": { prefixes: ["HU"], shape: /^\d{8}$/ },
  "9914": { prefixes: ["AT"], shape: /^U\d{8}$/ },
  "9920": { prefixes: ["ES"], shape: /^[A-Z0-9]\d{7}[A-Z0-9]$/ },
  "9922": { prefixes: ["AD"], shape: /^[A-Z0-9]{2,13}$/ },
  "9923": { prefixes: ["AL"], shape: /^[A-Z0-9]{2,13}$/ },
  "9924": { prefixes: ["BA"], shape: /^[A-Z0-9]{2,13}$/ },
  "9925": { prefixes: ["BE"], shape: /^[01]\d{9}$/ },
  "9926": { prefixes: ["BG"], shape: /^\d{9,10}$/ },
  "9927": { prefixes: ["CH"], shape: /^E\d{9}(MWST|TVA|IVA)?$/ },
  "9928": { prefixes: ["CY"], shape: /^\d{8}[A-Z]$/ },
  "9929": { prefixes: ["CZ"], shape: /^\d{8,10}$/ },
  "9930": { prefixes: ["DE"], shape: /^\d{9}$/ },
  "9931": { prefixes: ["EE"], shape: /^\d{9}$/ },
  "9932": { prefixes: ["GB"], shape: /^(\d{9}|\d{12}|GD\d{3}|HA\d{3})$/ },
  "9933": { prefixes: ["EL"], shape: /^\d{9}$/ },
  "9934": { prefixes: ["HR"], shape: /^\d{11}$/ },
  "9935": { prefixes: ["IE"], shape: /^(\d{7}[A-W][A-IW]?|\d[A-Z+*]\d{5}[A-W])$/ },
  "9936": { prefixes: ["LI"], shape: /^[A-Z0-9]{2,13}$/ },
  "9937": { prefixes: ["LT"], shape: /^(\d{9}|\d{12})$/ },
  "9938": { prefixes: ["LU"], shape: /^\d{8}$/ },
  "9939": { prefixes: ["LV"], shape: /^\d{11}$/ },
  "9940": { prefixes: ["MC", "FR"], shape: /^[A-Z0-9]{2,13}$/ },
  "9941": { prefixes: ["ME"], shape: /^[A-Z0-9]{2,13}$/ },
  "9942": { prefixes: ["MK"], shape: /^[A-Z0-9]{2,13}$/ },
  "9943": { prefixes: ["MT"], shape: /^\d{8}$/ },
  "9944": { prefixes: ["NL"], shape: /^\d{9}B\d{2}$/ },
  "9945": { prefixes: ["PL"], shape: /^\d{10}$/ },
  "9946": { prefixes: ["PT"], shape: /^\d{9}$/ },
  "9947": { prefixes: ["RO"], shape: /^\d{2,10}$/ },
  "9948": { prefixes: ["RS"], shape: /^[A-Z0-9]{2,13}$/ },
  "9949": { prefixes: ["SI"], shape: /^\d{8}$/ },
  "9950": { prefixes: ["SK"], shape: /^\d{10}$/ },
  "9951": { prefixes: ["SM"], shape: /^[A-Z0-9]{2,13}$/ },
  "9952": { prefixes: ["TR"], shape: /^[A-Z0-9]{2,13}$/ },
  "9953": { prefixes: ["VA"], shape: /^[A-Z0-9]{2,13}$/ },
  "9957": { prefixes: ["FR"], shape: /^[A-HJ-NP-Z0-9]{2}\d{9}$/ },
};

/** A Belgian enterprise number (10 digits): the last two are 97 − (the first eight mod 97). */
export function isBelgianEnterpriseNumber(digits: string): boolean {
  if (!/^\d{10}$/.test(digits)) return false;
  return 97 - (Number(digits.slice(0, 8)) % 97) === Number(digits.slice(8));
}

/** GS1's check digit (GLN, 13 digits): weights 3 and 1 from the right, the sum made a multiple of 10. */
export function hasGs1CheckDigit(digits: string): boolean {
  if (!/^\d+$/.test(digits) || digits.length < 2) return false;
  const body = digits.slice(0, -1);
  let sum = 0;
  for (let i = 0; i < body.length; i++) sum += Number(body[body.length - 1 - i]) * (i % 2 === 0 ? 3 : 1);
  return (10 - (sum % 10)) % 10 === Number(digits.at(-1));
}

/** Norway's organisation number (9 digits): weights 2–7 from the right, mod 11 (PEPPOL-COMMON-R041). */
function isNorwegianOrgNumber(digits: string): boolean {
  if (!/^\d{9}$/.test(digits) || Number(digits) === 0) return false;
  let sum = 0;
  for (let i = 0; i < 8; i++) sum += Number(digits[7 - i]) * ((i % 6) + 2);
  return (11 - (sum % 11)) % 11 === Number(digits[8]);
}

/** Luhn's check digit (a Swedish organisation number, 10 digits: PEPPOL-COMMON-R049). */
function hasLuhnCheckDigit(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

/** An Australian Business Number (11 digits, weighted mod 89 with the first digit less one: R050). */
function isAbn(digits: string): boolean {
  if (!/^\d{11}$/.test(digits)) return false;
  const weights = [10, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19];
  const sum = [...digits].reduce((s, d, i) => s + (Number(d) - (i === 0 ? 1 : 0)) * weights[i]!, 0);
  return sum % 89 === 0;
}

/** The checks schemes define, on the identifier in capitals: a problem in words, or null. */
const SCHEME_CHECKS: Record<string, (id: string) => string | null> = {
  "0208": (id) =>
    isBelgianEnterpriseNumber(id)
      ? null
      : "a Belgian enterprise number is 10 digits whose last two are 97 minus the first eight modulo 97",
  "0088": (id) =>
    /^\d{13}$/.test(id) && hasGs1CheckDigit(id) ? null : "a GLN is 13 digits ending in the GS1 check digit",
  "0192": (id) =>
    isNorwegianOrgNumber(id) ? null : "a Norwegian organisation number is 9 digits with its mod-11 check digit",
  "0184": (id) => (/^(DK)?\d{8}$/.test(id) ? null : "a Danish CVR number is 8 digits (optionally after DK)"),
  "0007": (id) =>
    /^\d{10}$/.test(id) && hasLuhnCheckDigit(id)
      ? null
      : "a Swedish organisation number is 10 digits with its Luhn check digit",
  "0151": (id) => (isAbn(id) ? null : "an Australian Business Number is 11 digits with its check digits"),
  "9918": (id) => {
    const problem = ibanProblem(id);
    return problem ? `must be an IBAN: ${problem}` : null;
  },
};

/**
 * What is wrong with a Peppol identifier, in words for a 400's message, or null when it is valid.
 */
export function peppolIdProblem(value: string): string | null {
  const match = /^(\d{4}):(.*)$/s.exec(value);
  if (!match) return 'must be "<scheme>:<identifier>" with a 4-digit scheme code (0208:0123456749)';
  const [, scheme, identifier] = match as unknown as [string, string, string];
  if (!PEPPOL_SCHEMES.has(scheme)) return `scheme ${scheme} is not in Peppol's participant identifier scheme list`;
  if (identifier.length < 1 || identifier.length > 50) return "the identifier must be 1 to 50 characters";
  if (/[\s\u0000-\u001f\u007f]/.test(identifier)) return "the identifier must not contain spaces or control characters";
  const id = identifier.toUpperCase();
  const check = SCHEME_CHECKS[scheme];
  if (check) return check(id);
  const vat = VAT_SCHEMES[scheme];
  if (vat) {
    const prefix = vat.prefixes.find((p) => id.startsWith(p));
    if (!prefix) return `scheme ${scheme} is a VAT number starting with ${vat.prefixes.join(" or ")}`;
    if (!vat.shape.test(id.slice(prefix.length))) return `is not a VAT number of ${prefix} (scheme ${scheme})`;
    if (scheme === "9925" && !isBelgianEnterpriseNumber(id.slice(2)))
      return "a Belgian VAT number is BE and the enterprise number, whose last two digits are its mod-97 check";
  }
  return null;
}

/** The two parts of a valid identifier. */
export function splitPeppolId(value: string): { scheme: string; identifier: string } {
  const at = value.indexOf(":");
  return { scheme: value.slice(0, at), identifier: value.slice(at + 1) };
}

/** Peppol identifiers are case-insensitive: two that differ only in case name one participant. */
export const samePeppolId = (a: string | null, b: string | null): boolean =>
  !!a && !!b && a.toLowerCase() === b.toLowerCase();
