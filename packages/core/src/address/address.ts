import type { Address } from "./resource";

/**
 * A postal address (its shape: ./resource.ts). An address is replaced whole, never merged; `country`
 * is null only for an address stored as free text before addresses were structured (see below).
 */
export type { Address };

export type AddressInput = Partial<Omit<Address, "country">> & { country: string };

export const toAddress = (input: AddressInput): Address => ({
  line1: input.line1 ?? null,
  line2: input.line2 ?? null,
  city: input.city ?? null,
  postalCode: input.postalCode ?? null,
  region: input.region ?? null,
  country: input.country,
});

/**
 * An address as stored, read back. Clients written before addresses were structured hold a free
 * text string: it is read as its first line in `line1`, the rest (joined with ", ") in `line2`,
 * and `country` null — nothing is guessed — until the client is edited with a structured address.
 */
export function readAddress(stored: unknown): Address | null {
  if (stored === null || stored === undefined) return null;
  if (typeof stored === "string") {
    const lines = stored
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter(Boolean);
    if (lines.length === 0) return null;
    const rest = lines.slice(1).join(", ");
    return {
      line1: lines[0]!.slice(0, 200),
      line2: rest ? rest.slice(0, 200) : null,
      city: null,
      postalCode: null,
      region: null,
      country: null,
    };
  }
  const a = stored as Partial<Address>;
  return {
    line1: a.line1 ?? null,
    line2: a.line2 ?? null,
    city: a.city ?? null,
    postalCode: a.postalCode ?? null,
    region: a.region ?? null,
    country: a.country ?? null,
  };
}

/** The lines of an address as printed on a document: street lines, "postal code city", region, country. */
export function addressLines(address: Address | null, countryName: (code: string) => string = (c) => c): string[] {
  if (!address) return [];
  const cityLine = [address.postalCode, address.city].filter(Boolean).join(" ");
  return [
    address.line1,
    address.line2,
    cityLine || null,
    address.region,
    address.country ? countryName(address.country) : null,
  ].filter((l): l is string => !!l);
}
