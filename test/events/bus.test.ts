import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createEventBridgeBus, MAX_DETAIL_BYTES } from "@invoicing/core/events/bus";
import { startFakeEventBridge } from "../deploy/stream-event";
import { createTestEnv, type TestEnv, type TestUser } from "../support/env";
import { newClient, ok } from "../invoices/fixtures";

/**
 * The EventBridge bus from the stream subscriber (docs/events.md, "The EventBridge bus"), against a
 * PutEvents stand-in that refuses what EventBridge refuses: an event too large for the bus goes as a
 * reference, and an entry refused as invalid is skipped, never retried for ever — either used to
 * hold the stream shard behind it for a day.
 */
let env: TestEnv;
let bus: Awaited<ReturnType<typeof startFakeEventBridge>>;
let throttleOnce = true;

beforeAll(async () => {
  // The SDK signs its calls: any credentials do for the stand-in.
  process.env.AWS_ACCESS_KEY_ID ??= "test";
  process.env.AWS_SECRET_ACCESS_KEY ??= "test";
  bus = await startFakeEventBridge({
    refuse: (entry) => {
      if (entry.Detail.includes("Refuse Me")) return "MalformedDetail";
      if (entry.Detail.includes("Throttle Me") && throttleOnce) {
        throttleOnce = false;
        return "ThrottlingException";
      }
      return undefined;
    },
  });
  env = await createTestEnv({ extraDeps: { eventBus: createEventBridgeBus("test-bus", "us-east-1", bus.url) } });
});
afterAll(() => bus.close());

const eventTypes = async (user: TestUser) =>
  (ok(await user.call("GET", "/events?limit=100")).body as { type: string; data: { name?: string } }[]).map(
    (e) => `${e.type}${e.data.name ? ` ${e.data.name}` : ""}`,
  );

describe("an event larger than the bus takes", () => {
  it("is put as a reference (data null, dataOmitted) instead of failing the publish", async () => {
    const publisher = createEventBridgeBus("test-bus", "us-east-1", bus.url);
    const event = (id: string, description: string) => ({
      id,
      type: "invoice.updated" as const,
      createdAt: "2026-11-22T09:30:00.000Z",
      resourceType: "invoice" as const,
      resourceId: 7,
      data: { id: 7, lineItems: [{ description }] },
    });
    // About 300 KB of UTF-8 (a resource of 100 long lines of three-byte characters): over 256 KB.
    await publisher.publish([event("evt_big_0", "€".repeat(100_000)), event("evt_small_0", "Consulting")]);
    const sent = bus.entries
      .map((e) => JSON.parse(e.Detail))
      .filter((d) => d.id === "evt_big_0" || d.id === "evt_small_0");
    expect(sent).toEqual([
      { ...event("evt_big_0", ""), data: null, dataOmitted: true },
      event("evt_small_0", "Consulting"),
    ]);
    for (const entry of bus.entries) expect(Buffer.byteLength(entry.Detail)).toBeLessThanOrEqual(MAX_DETAIL_BYTES);
  });

  it("events that fit each but not together go in separate calls", async () => {
    const publisher = createEventBridgeBus("test-bus", "us-east-1", bus.url);
    const events = ["evt_a_0", "evt_b_0"].map((id) => ({
      id,
      type: "client.updated" as const,
      createdAt: "2026-11-22T09:30:00.000Z",
      resourceType: "client" as const,
      resourceId: 1,
      data: { notes: "x".repeat(150_000) },
    }));
    await publisher.publish(events);
    expect(
      bus.entries.map((e) => JSON.parse(e.Detail).id).filter((id) => id === "evt_a_0" || id === "evt_b_0"),
    ).toEqual(["evt_a_0", "evt_b_0"]);
  });
});

describe("an entry the bus refuses", () => {
  it("as invalid: logged and skipped, the event stored and the records after it handled", async () => {
    const user = await env.user();
    const client = await newClient(user);
    ok(await user.call("PATCH", `/clients/${client.id}`, { name: "Refuse Me" }));
    ok(await user.call("PATCH", `/clients/${client.id}`, { name: "After" }));
    const lines = vi.spyOn(console, "log");
    try {
      await env.drainStream();
      // Counted for the operator's alarm (StreamRecordsSkipped, infra/alarms.ts), once.
      const metrics = lines.mock.calls.map((c) => String(c[0])).filter((l) => l.includes('"StreamRecordsSkipped":1'));
      expect(metrics).toHaveLength(1);
    } finally {
      lines.mockRestore();
    }
    expect(await eventTypes(user)).toEqual(["client.updated After", "client.updated Refuse Me", "client.created Acme"]);
    const names = bus.entries
      .map((e) => JSON.parse(e.Detail))
      .filter((d) => d.resourceId === client.id && d.data?.name);
    expect(names.map((d) => d.data.name)).toContain("After");
    expect(names.map((d) => d.data.name)).not.toContain("Refuse Me");
  });

  it("throttled: the record is handled again until the bus takes it", async () => {
    const user = await env.user();
    const client = await newClient(user);
    await env.drainStream();
    ok(await user.call("PATCH", `/clients/${client.id}`, { name: "Throttle Me" }));
    const onTheBus = () => bus.entries.map((e) => JSON.parse(e.Detail).data?.name);
    // Refused once: the event is stored (the store comes before the batched PutEvents, issue 37) and
    // the record stays on the stream, not yet on the bus.
    await env.drainStream();
    expect(await eventTypes(user)).toEqual(["client.updated Throttle Me", "client.created Acme"]);
    expect(onTheBus()).not.toContain("Throttle Me");
    // Handled again: the bus takes it, and the store keeps one copy.
    await env.drainStream();
    expect(await eventTypes(user)).toEqual(["client.updated Throttle Me", "client.created Acme"]);
    expect(onTheBus().filter((name) => name === "Throttle Me")).toHaveLength(1);
  });
});
