/**
 * Which stream records invoke the subscriber at all: the event source mapping's filter criteria
 * (infra/stream.ts), in Lambda's event-filtering syntax. Pure data, because SST evaluates infra/ on
 * its own.
 *
 * Without a filter every write invokes the subscriber, including its own: each event it stores, each
 * webhook attempt it claims and records, each email it claims and marks sent, the report aggregates
 * and markers it keeps, and every item DynamoDB's TTL deletes (idempotency records, events, sent
 * emails). Those invocations do nothing (derive.ts makes no event of them) but cost a Lambda run each,
 * several per request. So the filter lets through only what the subscriber acts on:
 * - a change of a resource that makes events (and report deltas): the sort-key prefixes below,
 *   written by a request or a job, never a TTL deletion (DynamoDB's own deletes carry
 *   `userIdentity`; writes made through the API have none);
 * - the INSERT of an email outbox record (the subscriber delivers it), and of a Peppol delivery
 *   record (the subscriber hands it to the `peppol` queue, whose worker makes its first hand-over:
 *   peppol/delivery.ts).
 *
 * A new kind of record that the subscriber must see is added here; test/events/stream-filter.test.ts
 * checks every kind `kindOf` (stream/derive.ts) recognises against these patterns.
 */
const RESOURCE_KEY_PREFIXES = [
  "CLIENT#",
  "INVOICE#",
  "PAYMENT#",
  "ESTIMATE#",
  "SCHEDULE#",
  "CREDITNOTE#",
  // Only its `webhook_endpoint.disabled` makes an event (stream/derive.ts).
  "WEBHOOK_ENDPOINT#",
];

const OUTBOX_KEY_PREFIX = "OUTBOX#";
const PEPPOL_KEY_PREFIX = "PEPPOL#";

/** A filter pattern: nested objects, and per field a list of alternatives. */
type Pattern = { [key: string]: Pattern | Leaf[] };
type Leaf = string | { prefix: string } | { exists: boolean };

export const STREAM_FILTERS: Pattern[] = [
  {
    dynamodb: {
      Keys: {
        pk: { S: [{ prefix: "USER#" }] },
        sk: { S: RESOURCE_KEY_PREFIXES.map((prefix) => ({ prefix })) },
      },
    },
    userIdentity: { type: [{ exists: false }] },
  },
  {
    eventName: ["INSERT"],
    dynamodb: {
      Keys: {
        pk: { S: [{ prefix: "USER#" }] },
        sk: { S: [{ prefix: OUTBOX_KEY_PREFIX }, { prefix: PEPPOL_KEY_PREFIX }] },
      },
    },
  },
];

/**
 * Whether a stream record passes the filters (any one of them), as Lambda's event filtering decides
 * for the subset of its syntax used above: nested objects, and per field a list of alternatives —
 * an exact string, `prefix`, `exists`. The local stream reader (packages/local/src/stream-reader.ts)
 * applies it, so `npm start` and the tests see exactly the records the deployed subscriber sees.
 */
export function passesStreamFilters(record: unknown, filters: Pattern[] = STREAM_FILTERS): boolean {
  return filters.some((filter) => matches(record, filter));
}

function matches(value: unknown, pattern: Pattern): boolean {
  return Object.entries(pattern).every(([key, expected]) => {
    const actual = value && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
    if (Array.isArray(expected)) return expected.some((leaf: Leaf) => matchesLeaf(actual, leaf));
    return matches(actual, expected as Pattern);
  });
}

function matchesLeaf(actual: unknown, leaf: Leaf): boolean {
  if (typeof leaf === "string") return actual === leaf;
  if ("prefix" in leaf) return typeof actual === "string" && actual.startsWith(leaf.prefix);
  return leaf.exists === (actual !== undefined);
}
