import { describe, expect, it } from "vitest";
import { kindOf } from "@invoicing/core/stream/derive";
import { passesStreamFilters, STREAM_FILTERS } from "@invoicing/core/stream/filter";

/**
 * The event source mapping's filter (core/src/stream/filter.ts, infra/stream.ts): the subscriber is
 * invoked for the changes it acts on, and not for its own writes or DynamoDB's TTL deletions. The
 * local stream reader applies the same function, so every stream test of the suite also runs
 * through it (a change the filter wrongly dropped would lose its event there).
 */
const record = (eventName: string, pk: string, sk: string, extra: Record<string, unknown> = {}) => ({
  eventID: "1",
  eventName,
  dynamodb: { Keys: { pk: { S: pk }, sk: { S: sk } }, SequenceNumber: "100", ApproximateCreationDateTime: 1 },
  ...extra,
});
const ttl = { userIdentity: { type: "Service", principalId: "dynamodb.amazonaws.com" } };

describe("what invokes the subscriber", () => {
  it.each([
    ["a client", "CLIENT#0000000001"],
    ["an invoice", "INVOICE#0000000001"],
    ["a payment", "PAYMENT#0000000001#0000000002"],
    ["an estimate", "ESTIMATE#0000000003"],
    ["a recurring schedule", "SCHEDULE#0000000004"],
  ])("every change of %s, a kind that makes events", (_what, sk) => {
    expect(kindOf("USER#u1", sk)).toBeDefined();
    for (const change of ["INSERT", "MODIFY", "REMOVE"])
      expect(passesStreamFilters(record(change, "USER#u1", sk)), `${change} ${sk}`).toBe(true);
  });

  it("a credit note (its events and report deltas)", () => {
    expect(passesStreamFilters(record("INSERT", "USER#u1", "CREDITNOTE#0000000001"))).toBe(true);
  });

  it("the insert of an email to deliver, but not the subscriber's own claim and sent marks", () => {
    expect(passesStreamFilters(record("INSERT", "USER#u1", "OUTBOX#20261122T093000000Z-ab"))).toBe(true);
    expect(passesStreamFilters(record("MODIFY", "USER#u1", "OUTBOX#20261122T093000000Z-ab"))).toBe(false);
    expect(passesStreamFilters(record("REMOVE", "USER#u1", "OUTBOX#20261122T093000000Z-ab", ttl))).toBe(false);
  });
});

describe("what does not", () => {
  it.each([
    ["an event the subscriber stored", "INSERT", "EVENT#2026-11-22T09:30:00.000Z#100#0"],
    ["a webhook attempt it claimed", "MODIFY", "WEBHOOK_ATTEMPT#1#2026-11-22T09:31:00.000Z#evt_100_0#1"],
    ["a report aggregate", "MODIFY", "REPORT#2026-11#EUR"],
    ["a stream-record marker", "INSERT", "REPORTED#100"],
    ["an idempotency record", "INSERT", "IDEMPOTENCY#abc"],
    ["a counter", "MODIFY", "COUNTER#invoiceId"],
    ["the email quota", "MODIFY", "EMAILQUOTA"],
    ["a checkout payment record", "INSERT", "CHECKOUT_PAYMENT#cs_1"],
  ])("%s", (_what, change, sk) => {
    expect(kindOf("USER#u1", sk)).toBeUndefined();
    expect(passesStreamFilters(record(change, "USER#u1", sk))).toBe(false);
  });

  it("an API key's item, whatever its sort key", () => {
    expect(passesStreamFilters(record("INSERT", "APIKEY#abc", "APIKEY"))).toBe(false);
    expect(passesStreamFilters(record("INSERT", "APIKEY#abc", "INVOICE#0000000001"))).toBe(false);
  });

  it("a TTL deletion, even of a kind that makes events", () => {
    expect(passesStreamFilters(record("REMOVE", "USER#u1", "INVOICE#0000000001", ttl))).toBe(false);
    expect(passesStreamFilters(record("REMOVE", "USER#u1", "EVENT#2026-11-22T09:30:00.000Z#100#0", ttl))).toBe(false);
  });

  it("stays within Lambda's limit of 5 filters per mapping, in the JSON Lambda takes", () => {
    expect(STREAM_FILTERS.length).toBeLessThanOrEqual(5);
    for (const filter of STREAM_FILTERS) expect(JSON.parse(JSON.stringify(filter))).toEqual(filter);
  });
});
