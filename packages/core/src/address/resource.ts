import * as v from "valibot";
import { nullableText } from "../resource";

/**
 * A postal address, as clients, the business profile and the documents' snapshots hold and return
 * it (the response shape, ../resource.ts). `country` is an assigned ISO 3166-1 alpha-2 code
 * (countries.ts); the others are free text or null.
 */
export const Address = v.strictObject({
  line1: nullableText,
  line2: nullableText,
  city: nullableText,
  postalCode: nullableText,
  region: nullableText,
  country: v.nullable(
    v.pipe(
      v.string(),
      v.regex(/^[A-Z]{2}$/),
      v.description(
        "ISO 3166-1 alpha-2. Null only for a client address stored as free text before addresses were structured",
      ),
    ),
  ),
});
export type Address = v.InferOutput<typeof Address>;
