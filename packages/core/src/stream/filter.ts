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
 * - the INSERT of an email outbox record (the subscriber delivers it).
 *
 * A new kind of record that the subscriber must see is added here; test/events/stream-filter.test.ts
 * checks every kind `kindOf` (events/derive.ts) recognises against these patterns.
 */
export const RESOURCE_KEY_PREFIXES = ["CLIENT#", "INVOICE#", "PAYMENT#", "ESTIMATE#", "SCHEDULE#", "CREDITNOTE#"];

export const OUTBOX_KEY_PREFIX = "OUTBOX#";

export const STREAM_FILTERS = [
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
    dynamodb: { Keys: { pk: { S: [{ prefix: "USER#" }] }, sk: { S: [{ prefix: OUTBOX_KEY_PREFIX }] } } },
  },
];
