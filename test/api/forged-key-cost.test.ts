import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { attachMeter, type Meter } from "../support/metering";
import { forgetVerifiedKeys } from "@invoicing/core/keys/recent-keys";
import { createTestEnv, expectProblem, request, type TestEnv, type TestUser } from "../support/env";

/**
 * Issue 38: a request with a key not yet known good costs no more than the key check — DynamoDB
 * reads no more than the key item (capacity counted by the meter, never time), no name is resolved,
 * no body read — whatever the route, for a forged key that names a real user with a large partition.
 */
let env: TestEnv;
let bob: TestUser;
let meter: Meter;
const lookups: string[] = [];

/** A big invoice: 100 lines of 1000-character descriptions (~110 KB an item). */
const bigLines = Array.from({ length: 100 }, (_, i) => ({
  description: `${i}`.padEnd(1000, "x"),
  unitPrice: "10.00",
}));

beforeAll(async () => {
  env = await createTestEnv({
    extraDeps: {
      webhookPolicy: {
        allowPrivate: false,
        lookup: async (host: string) => {
          lookups.push(host);
          return [{ address: "93.184.216.34", family: 4 }];
        },
      } as never,
    },
  });
  bob = await env.user();
  const client = await bob.call("POST", "/clients", { name: "Bob's client" });
  for (let i = 0; i < 10; i++) {
    const res = await bob.call("POST", "/invoices", { clientId: client.body.id, lineItems: bigLines });
    expect(res.status).toBe(201);
  }
  meter = attachMeter(env.deps.db.doc);
});

const forged = () => ({ Authorization: `Bearer inv_${bob.userId}_${randomBytes(32).toString("base64url")}` });

describe("a forged key naming a real user", () => {
  it("GET /invoices?limit=200 reads at most the key item: no Query of the user's invoices", async () => {
    // What reading the key item costs: bob's own key, checked alone in a fresh container.
    forgetVerifiedKeys();
    meter.reset();
    await request(env.app, "GET", "/no-such-route", undefined, { Authorization: `Bearer ${bob.key}` });
    const keyItemUnits = meter.readUnits;
    expect(keyItemUnits).toBeGreaterThan(0);

    for (const path of ["/invoices?limit=200", "/invoices/1", "/clients?limit=200", "/invoices/1/pdf"]) {
      meter.reset();
      const res = await request(env.app, "GET", path, undefined, forged());
      expectProblem(res, 401, "unauthorized");
      expect({ path, readUnits: meter.readUnits, itemsRead: meter.itemsRead, commands: meter.byCommand }).toEqual({
        path,
        readUnits: keyItemUnits,
        itemsRead: 0,
        commands: { GetItemCommand: 1 },
      });
    }
  });

  it("POST /webhook-endpoints resolves nothing before the key is known good", async () => {
    lookups.length = 0;
    const body = { url: "https://hooks.forged.example/x", events: ["invoice.paid"] };
    expectProblem(await request(env.app, "POST", "/webhook-endpoints", body, forged()), 401, "unauthorized");
    expect(lookups).toEqual([]);
    // The same request with bob's key resolves the name (so the counter above can see a lookup).
    forgetVerifiedKeys();
    expect((await bob.call("POST", "/webhook-endpoints", body)).status).toBe(201);
    expect(lookups).toEqual(["hooks.forged.example"]);
  });

  it("its JSON body is never read", async () => {
    const watch = { pulled: false };
    const body = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          watch.pulled = true;
          controller.enqueue(new TextEncoder().encode(JSON.stringify({ name: "x".repeat(200_000) })));
          controller.close();
        },
      },
      { highWaterMark: 0 },
    );
    const res = await env.app.request("http://localhost/clients", {
      method: "POST",
      headers: { ...forged(), "Content-Type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(401);
    expect(watch.pulled).toBe(false);
  });
});
