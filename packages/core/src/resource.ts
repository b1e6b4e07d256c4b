import * as v from "valibot";

/**
 * What the API's response bodies are made of. Each resource's shape is ONE valibot schema, in the
 * `resource.ts` beside its model (invoices/resource.ts, …): its TypeScript type is inferred from the
 * schema, the fields a stored item shows are the schema's keys (`toResource`), GET /openapi.json
 * documents it (functions/src/schemas/resources.ts names them), and the conformance test checks
 * real responses against it. A field added to the schema is typed, shown, documented and checked at
 * once; there is no interface or field list beside it to forget.
 *
 * Every field is required: the API promises each listed field is always present, `null` when it has
 * no value — the nullable ones are the `v.nullable(...)`. The descriptions are part of the shape
 * (they are what the document says about a field), so they live here too.
 */

/** ISO 8601 UTC with milliseconds, the one spelling of every timestamp in a response. */
export const timestampOut = v.pipe(
  v.string(),
  v.isoTimestamp(),
  v.regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
  v.metadata({ description: "ISO 8601 UTC with milliseconds", examples: ["2026-11-22T09:30:00.000Z"] }),
);

export const moneyOut = v.pipe(
  v.string(),
  v.regex(/^-?\d+\.\d{2}$/),
  v.metadata({ description: "Exact decimal amount with two decimals", examples: ["1234.50"] }),
);
export const quantityOut = v.pipe(
  v.string(),
  v.regex(/^\d+\.\d{2}$/),
  v.metadata({ description: "Decimal with two decimals", examples: ["3.00"] }),
);
export const taxRateOut = v.pipe(
  v.string(),
  v.regex(/^[01]\.\d{2}(\d{0,3}[1-9])?$/),
  v.metadata({
    description: "Fraction with 2 to 6 decimals, trailing zeros beyond two dropped (0.10 is ten percent)",
    examples: ["0.0825"],
  }),
);
export const idOut = v.pipe(v.number(), v.integer(), v.minValue(1));
export const currencyOut = v.pipe(
  v.string(),
  v.regex(/^[A-Z]{3}$/),
  v.metadata({ description: "ISO 4217 code", examples: ["USD"] }),
);
export const paymentTermsDaysOut = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(365));
export const text = v.string();
/** The same shape requests accept (functions/src/schemas/common.ts), not the stricter JSON Schema "email". */
export const emailOut = v.pipe(v.string(), v.regex(/^[^\s@]+@[^\s@]+$/), v.maxLength(254));
export const nullableText = v.nullable(v.string());
export const publicTokenOut = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9_-]{22,}$/),
  v.description("URL-safe token (≥ 128 random bits) of the public page /public/…/{publicToken}; never changes"),
);

/** A response schema: an object schema whose entries are the resource's fields, in response order. */
type ResourceSchema = v.GenericSchema & { readonly entries: v.ObjectEntries };

/**
 * The public shape of a stored item: exactly the schema's fields, in its order, each always present,
 * `null` where there is no value — storage attributes (keys, version, …) never leak. Fields derived
 * rather than stored (an invoice's amountDue, a document's taxBreakdown) are set by the caller.
 */
export function toResource<S extends ResourceSchema>(item: object, schema: S): v.InferOutput<S> {
  const stored = item as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const field of fieldsOf(schema)) out[field] = stored[field] ?? null;
  return out as v.InferOutput<S>;
}

// A page shows up to 100 resources of one schema: its field list is taken once, not per item.
const fieldLists = new WeakMap<ResourceSchema, readonly string[]>();
function fieldsOf(schema: ResourceSchema): readonly string[] {
  let fields = fieldLists.get(schema);
  if (!fields) fieldLists.set(schema, (fields = Object.keys(schema.entries)));
  return fields;
}
