import type * as v from "valibot";
import { toJsonSchema, toJsonSchemaDefs, type ConversionConfig, type JsonSchema } from "@valibot/to-json-schema";
import {
  MAX_LINE_ITEMS,
  MAX_OFFSET,
  currency,
  httpsUrl,
  lineItemInput,
  lineItems,
  pagination,
  templateLineItems,
  pathId,
  quantity,
  taxRate,
  timestamp,
  unitPrice,
} from "../schemas/common";
import { resources } from "../schemas/resources";
import { creditLineInput, creditLineItems } from "../schemas/credit-notes";

/**
 * valibot → JSON Schema (2020-12, the dialect of OpenAPI 3.1), from the very schemas that validate
 * requests (schemas/*.ts) and describe responses (schemas/resources.ts).
 *
 * What valibot cannot say in JSON Schema, said here once:
 * - Pieces whose rule is code (a `rawCheck` on exact decimals, a `rawTransform` that parses
 *   timestamps, a `check` against the runtime's currency list) get a hand-written JSON Schema that
 *   states the same rule — DOCUMENTED below, keyed by the schema object itself, so they follow the
 *   schema wherever it is used (and a renamed or removed piece fails to compile here).
 * - Any other `check`/`rawCheck` only narrows a value whose type is already documented: it is kept
 *   out of the JSON Schema and its message (when it has one) is added to the description.
 * - Anything else that cannot be converted (a schema type JSON has no word for) throws, so the
 *   document never silently documents a wrong type: the test of the document fails instead.
 */

type Piece = v.GenericSchema;

interface Documented {
  schema: Piece;
  json: JsonSchema;
  /** Components are shared by `$ref`; the rest (parameters' pieces) are copied in place. */
  component: boolean;
}

const decimalDescription = (what: string, scale: number) =>
  `${what}. A JSON string ("12.50") or number (12.5) with at most ${scale} decimals; more is a 400, never rounded. Arithmetic is exact decimal.`;

/** The hand-written JSON Schemas of the pieces whose validation is code. */
const DOCUMENTED: Record<string, Documented> = {
  Quantity: {
    schema: quantity,
    component: true,
    json: {
      description: decimalDescription("Quantity, > 0 and ≤ 1000000; default 1", 2),
      anyOf: [
        { type: "string", pattern: "^\\s*\\d+(\\.\\d{1,2})?\\s*$" },
        { type: "number", exclusiveMinimum: 0, maximum: 1_000_000 } as JsonSchema,
      ],
      examples: ["2.5"],
    },
  },
  UnitPrice: {
    schema: unitPrice,
    component: true,
    json: {
      description: decimalDescription("Unit price, |unitPrice| ≤ 999999999.99; negative for a discount line", 2),
      anyOf: [
        { type: "string", pattern: "^\\s*-?\\d+(\\.\\d{1,2})?\\s*$" },
        { type: "number", minimum: -999_999_999.99, maximum: 999_999_999.99 },
      ],
      examples: ["19.99"],
    },
  },
  TaxRate: {
    schema: taxRate,
    component: true,
    json: {
      description: decimalDescription("Tax rate as a fraction, 0 ≤ taxRate ≤ 1 (0.0825 is 8.25 %); default 0", 6),
      anyOf: [
        { type: "string", pattern: "^\\s*\\d+(\\.\\d{1,6})?\\s*$" },
        { type: "number", minimum: 0, maximum: 1 },
      ],
      examples: ["0.0825"],
    },
  },
  TimestampInput: {
    schema: timestamp,
    component: true,
    json: {
      type: "string",
      description:
        "An RFC 3339 date-time (seconds required, fraction kept to the millisecond, any offset) or a date YYYY-MM-DD (00:00:00Z of that day). Impossible dates are a 400. Responses give it back as ISO 8601 UTC with milliseconds.",
      anyOf: [
        { type: "string", format: "date-time" },
        { type: "string", format: "date" },
      ],
      examples: ["2026-11-22T09:30:00Z", "2026-11-22"],
    },
  },
  Currency: {
    schema: currency,
    component: true,
    json: {
      type: "string",
      pattern: "^[A-Z]{3}$",
      description: "An uppercase ISO 4217 currency code the runtime knows (`XYZ` is a 400).",
      examples: ["USD"],
    },
  },
  HttpsUrl: {
    schema: httpsUrl,
    component: true,
    json: { type: "string", format: "uri", pattern: "^https://", maxLength: 2048, description: "An https URL." },
  },
  LineItemInput: { schema: lineItemInput, component: true, json: {} },
  CreditNoteLineInput: { schema: creditLineInput, component: true, json: {} },
  CreditNoteLineItems: {
    schema: creditLineItems,
    component: false,
    json: { type: "array", items: { $ref: "#/components/schemas/CreditNoteLineInput" }, maxItems: MAX_LINE_ITEMS },
  },
  // Validated length first, then items (see common.ts); documented as the plain array it accepts.
  LineItems: {
    schema: lineItems,
    component: false,
    json: { type: "array", items: { $ref: "#/components/schemas/LineItemInput" }, maxItems: MAX_LINE_ITEMS },
  },
  TemplateLineItems: {
    schema: templateLineItems,
    component: false,
    json: {
      type: "array",
      items: { $ref: "#/components/schemas/LineItemInput" },
      minItems: 1,
      maxItems: MAX_LINE_ITEMS,
    },
  },
  // Path ids and list filters arrive as strings but are positive integers (the parameters' `style`
  // is simple/form, so a client sends the number as is).
  PathId: {
    schema: pathId,
    component: false,
    json: { type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
  },
  Limit: {
    schema: pagination.limit.wrapped,
    component: false,
    json: { type: "integer", minimum: 1, maximum: 200, default: 100 },
  },
  Offset: {
    schema: pagination.offset.wrapped,
    component: false,
    json: { type: "integer", minimum: 0, maximum: MAX_OFFSET, default: 0 },
  },
};

/** Checks that only narrow an already documented type (their message joins the description). */
const NARROWING = new Set(["check", "raw_check", "partial_check", "check_items"]);

const CONFIG: ConversionConfig = {
  target: "draft-2020-12",
  typeMode: "input",
  errorMode: "throw",
  overrideAction: ({ valibotAction, jsonSchema }) => {
    if (!NARROWING.has(valibotAction.type)) return undefined;
    const message = (valibotAction as { message?: unknown }).message;
    if (typeof message !== "string") return jsonSchema;
    return { ...jsonSchema, description: jsonSchema.description ? `${jsonSchema.description}; ${message}` : message };
  },
};

const definitions: Record<string, Piece> = {
  ...Object.fromEntries(Object.entries(DOCUMENTED).map(([name, d]) => [name, d.schema])),
  ...resources,
};

const DEFS_PREFIX = "#/$defs/";
export const COMPONENT_PREFIX = "#/components/schemas/";

/** `#/$defs/X` → `#/components/schemas/X`, or the piece itself where it is copied in place. */
function relink(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(relink);
  if (node === null || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[key] = relink(value);
  const ref = out.$ref;
  if (typeof ref === "string" && ref.startsWith(DEFS_PREFIX)) {
    const name = ref.slice(DEFS_PREFIX.length);
    const documented = DOCUMENTED[name];
    if (documented && !documented.component) {
      const { $ref: _, ...siblings } = out;
      return { ...siblings, ...structuredClone(documented.json) };
    }
    out.$ref = COMPONENT_PREFIX + name;
  }
  return out;
}

/** The JSON Schema of one request or response schema, its named pieces as `$ref`s to components. */
export function jsonSchemaOf(schema: Piece): JsonSchema {
  const { $schema: _s, $defs: _d, ...rest } = toJsonSchema(schema, { ...CONFIG, definitions });
  return relink(rest) as JsonSchema;
}

/** components.schemas: the response resources and the shared request pieces. */
export function componentSchemas(): Record<string, JsonSchema> {
  const converted = toJsonSchemaDefs(definitions, CONFIG);
  const out: Record<string, JsonSchema> = {};
  for (const [name, json] of Object.entries(converted)) {
    const documented = DOCUMENTED[name];
    if (documented && !documented.component) continue;
    const own = documented && Object.keys(documented.json).length > 0 ? structuredClone(documented.json) : json;
    out[name] = relink(own) as JsonSchema;
  }
  return out;
}
