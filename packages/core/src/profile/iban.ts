/**
 * IBAN (ISO 13616) and BIC (ISO 9362) checks. An IBAN is a country code, two check digits and the
 * country's BBAN, whose length the country fixes (the SWIFT IBAN registry); the check digits make
 * the whole number, rearranged and with letters as 10–35, equal 1 modulo 97.
 */
const IBAN_LENGTHS: Record<string, number> = {
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BI: 27,
  BR: 29,
  BY: 28,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DJ: 27,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FK: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HN: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IQ: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LC: 32,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  LY: 25,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MN: 20,
  MR: 27,
  MT: 31,
  MU: 30,
  NI: 28,
  NL: 18,
  NO: 15,
  OM: 23,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  RU: 33,
  SA: 24,
  SC: 31,
  SD: 18,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  SO: 23,
  ST: 25,
  SV: 28,
  TL: 23,
  TN: 24,
  TR: 26,
  UA: 29,
  VA: 22,
  VG: 24,
  XK: 20,
  YE: 30,
};

/** The IBAN as stored: spaces removed, uppercase. */
export const normalizeIban = (input: string): string => input.replace(/ /g, "").toUpperCase();

/** Why an (already normalized) IBAN is not valid, or null when it is. */
export function ibanProblem(iban: string): string | null {
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]+$/.test(iban)) return "must be a country code, two check digits and letters or digits";
  const length = IBAN_LENGTHS[iban.slice(0, 2)];
  if (length === undefined) return `${iban.slice(0, 2)} has no IBAN`;
  if (iban.length !== length) return `an IBAN of ${iban.slice(0, 2)} has ${length} characters`;
  return mod97(iban.slice(4) + iban.slice(0, 4)) === 1 ? null : "the check digits do not match";
}

/** The number spelled by digits and letters (A = 10 … Z = 35), modulo 97, a digit at a time. */
function mod97(text: string): number {
  let rest = 0;
  for (const char of text) {
    const value = parseInt(char, 36);
    rest = value >= 10 ? (rest * 100 + value) % 97 : (rest * 10 + value) % 97;
  }
  return rest;
}

/** ISO 9362: 4 letters (institution), 2 letters (country), 2 letters or digits, optional 3 for the branch. */
export const isBic = (bic: string): boolean => /^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/.test(bic);

/** Formats an IBAN in groups of four for people to read. */
export const displayIban = (iban: string): string => iban.replace(/(.{4})(?=.)/g, "$1 ");
