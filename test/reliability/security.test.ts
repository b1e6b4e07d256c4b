import { createHash, randomBytes } from "node:crypto";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createApiKey } from "@invoicing/core/keys/api-keys";
import { op } from "../support/fault-proxy";
import { startStripeCardProcessor, type FakeStripe } from "../support/fake-stripe";
import { request, type TestResponse, type TestUser } from "../support/env";
import { createFaultyEnv, scanTable, type FaultyEnv } from "./harness";
import { WIDGET as line } from "../support/line-items";

/**
 * Secrets stay secret: API keys are stored only as hashes (read from the table itself), no key,
 * token or secret reaches a log line or an error body, and the public page carries the headers
 * that keep browsers from sniffing, framing or leaking its URL.
 */
const STRIPE_SECRET = `sk_test_${randomBytes(18).toString("hex")}`;
const WEBHOOK_SECRET = `whsec_${randomBytes(18).toString("hex")}`;

let fake: FakeStripe;
let world: FaultyEnv;
let alice: TestUser;

beforeAll(async () => {
  const stripe = await startStripeCardProcessor({ secretKey: STRIPE_SECRET, webhookSecret: WEBHOOK_SECRET });
  fake = stripe.fake;
  world = await createFaultyEnv({ extraDeps: { payments: stripe.payments } });
  fake.now = () => world.env.clock.now;
  alice = await world.env.user();
});

afterAll(async () => {
  await world?.close();
  await fake?.close();
});

async function sentInvoice(user: TestUser): Promise<Record<string, any>> {
  const clientId = (await user.call("POST", "/clients", { name: "Acme", email: "billing@acme.test" })).body.id;
  const created = await user.call("POST", "/invoices", { clientId, lineItems: [line] });
  expect((await user.call("POST", `/invoices/${created.body.id}/finalize`)).status).toBe(200);
  const sent = await user.call("POST", `/invoices/${created.body.id}/send`);
  expect(sent.status).toBe(200);
  return sent.body;
}

describe("API keys are stored only as hashes", () => {
  it("no plain key, nor its secret part, appears anywhere in the table; its SHA-256 does", async () => {
    const keys: string[] = [alice.key];
    const made = await alice.call("POST", "/api-keys", { name: "ci" }, { "Idempotency-Key": "key-with-idempotency" });
    expect(made.status).toBe(201);
    keys.push(made.body.key);
    keys.push((await createApiKey(world.env.deps.db, "cli-user", "cli", world.env.clock.now)).key);
    const revoked = await alice.call("POST", "/api-keys", {});
    keys.push(revoked.body.key);
    expect((await alice.call("DELETE", `/api-keys/${revoked.body.id}`)).status).toBe(204);

    const table = JSON.stringify(await scanTable(world.env.deps.db));
    for (const key of keys) {
      // inv_<userId>_<secret>: the user part is no secret (docs/auth.md); the 43-character secret is.
      expect(key).toMatch(/^inv_[A-Za-z0-9_-]{1,64}_[A-Za-z0-9_-]{43}$/);
      const secret = key.slice(-43);
      expect(table).not.toContain(key);
      // The listed prefix holds the secret's first 8 characters by design; nothing past them is stored.
      expect(table).not.toContain(secret.slice(8));
      expect(table).not.toContain(secret.slice(2, 22));
    }
    for (const key of keys.slice(0, 3)) expect(table).toContain(createHash("sha256").update(key).digest("hex"));
    // The listing shows no secret either.
    const listed = await alice.call("GET", "/api-keys");
    for (const key of keys) expect(listed.text).not.toContain(key.slice(-35));
  });
});

describe("no key, token or secret in logs or error bodies", () => {
  it("through keys good and bad, payments, webhooks, public pages, 4xx, 503 and Stripe failures", async () => {
    const lines: string[] = [];
    const capture = (...args: unknown[]) =>
      void lines.push(args.map((a) => (typeof a === "string" ? a : (JSON.stringify(a) ?? String(a)))).join(" "));
    const spies = (["log", "info", "warn", "error", "debug", "trace"] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation(capture),
    );
    /** Responses to look into: the error bodies among them must hold no secret. */
    const bodies: TestResponse[] = [];
    const faulty = world.as(alice);
    const secrets: string[] = [alice.key, STRIPE_SECRET, WEBHOOK_SECRET];
    try {
      // Requests with a good key; the pay link (opened below) calls Stripe with its secret.
      const invoice = await sentInvoice(alice);
      expect(invoice.cardProcessorPaymentLink).toMatch(/^https?:/);
      secrets.push(invoice.publicToken);

      // Stripe failing: opening the pay link is a 503 and logs a warning.
      const second = await alice.call("POST", "/invoices", { clientId: invoice.clientId, lineItems: [line] });
      await alice.call("POST", `/invoices/${second.body.id}/finalize`);
      bodies.push(await alice.call("POST", `/invoices/${second.body.id}/send`));
      secrets.push(second.body.publicToken);
      fake.failNext(500, 10);
      bodies.push(await request(world.env.app, "GET", `/public/invoices/${second.body.publicToken}/pay`));
      fake.failNext(500, 0);

      // Bad keys of every kind.
      const unknown = `inv_${randomBytes(32).toString("base64url")}`;
      const made = await alice.call("POST", "/api-keys", { name: "to revoke" });
      await alice.call("DELETE", `/api-keys/${made.body.id}`);
      secrets.push(unknown, made.body.key);
      for (const authorization of [
        `Bearer ${unknown}`,
        `Bearer ${made.body.key}`,
        unknown,
        `Basic ${Buffer.from(`x:${unknown}`).toString("base64")}`,
      ]) {
        bodies.push(await request(world.env.app, "GET", "/invoices", undefined, { Authorization: authorization }));
      }
      bodies.push(await request(world.env.app, "GET", `/invoices?api_key=${unknown}&key=${alice.key}`));

      // Public pages, their PDF and pay redirect, unknown tokens.
      for (const path of [
        `/public/invoices/${invoice.publicToken}`,
        `/public/invoices/${invoice.publicToken}/pdf`,
        `/public/invoices/${invoice.publicToken}/pay`,
      ]) {
        expect((await request(world.env.app, "GET", path)).status).toBeLessThan(400);
      }
      const guessed = randomBytes(24).toString("base64url");
      secrets.push(guessed);
      bodies.push(await request(world.env.app, "GET", `/public/invoices/${guessed}`));

      // Webhooks: a forged signature and a genuine one.
      const opened = (await alice.call("GET", `/invoices/${invoice.id}`)).body;
      const payload = JSON.stringify({
        id: "evt_sec_1",
        object: "event",
        type: "checkout.session.completed",
        created: Math.floor(world.env.clock.now.getTime() / 1000),
        livemode: false,
        data: { object: fake.completeSession(opened.cardProcessorCheckoutSessionId) },
      });
      const header = Stripe.webhooks.generateTestHeaderString({
        payload,
        secret: WEBHOOK_SECRET,
        timestamp: Math.floor(world.env.clock.now.getTime() / 1000),
      });
      bodies.push(
        await request(world.env.app, "POST", "/webhooks/card-processor", payload, { "Stripe-Signature": "t=1,v1=00" }),
      );
      const genuine = await request(world.env.app, "POST", "/webhooks/card-processor", payload, {
        "Stripe-Signature": header,
      });
      expect(genuine.status, lines.join("\n")).toBe(200);

      // Validation errors echoing input, with a key in the body.
      bodies.push(
        await alice.call("POST", "/clients", { name: alice.key, apiKey: alice.key, email: `${alice.key}@x` }),
      );

      // DynamoDB failing under requests that carry the key, and under the public page (its URL holds the token).
      const rule = world.proxy.inject({ match: op("GetItem"), fault: "server-error", times: Infinity });
      const queryRule = world.proxy.inject({ match: op("Query"), fault: "throttle", times: Infinity });
      try {
        bodies.push(await faulty.call("GET", "/invoices"));
        bodies.push(await faulty.call("GET", `/invoices/${invoice.id}`, undefined, { "Idempotency-Key": alice.key }));
        bodies.push(await request(world.app, "GET", `/public/invoices/${invoice.publicToken}`));
        bodies.push(await request(world.app, "GET", `/public/invoices/${invoice.publicToken}/pdf`));
      } finally {
        rule.remove();
        queryRule.remove();
      }
      expect(bodies.filter((b) => b.status === 503).length).toBeGreaterThanOrEqual(3);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }

    expect(lines.length, "the scenario logs something (503s and Stripe failures do)").toBeGreaterThan(0);
    expect(bodies.filter((b) => b.status >= 400).length).toBeGreaterThanOrEqual(8);
    const log = lines.join("\n");
    for (const secret of secrets) {
      expect(log, `a log line holds ${secret.slice(0, 10)}…`).not.toContain(secret);
      for (const body of bodies.filter((b) => b.status >= 400))
        expect(body.text, `an error body holds ${secret.slice(0, 10)}…`).not.toContain(secret);
    }
  });
});

describe("security headers of the public pages", () => {
  it("page, PDF and 404 alike: nosniff, no framing, no referrer, no caching, a strict CSP", async () => {
    const invoice = await sentInvoice(alice);
    const estimate = await alice.call("POST", "/estimates", { clientId: invoice.clientId, lineItems: [line] });
    expect((await alice.call("POST", `/estimates/${estimate.body.id}/send`)).status).toBe(200);
    const paths = [
      `/public/invoices/${invoice.publicToken}`,
      `/public/invoices/${invoice.publicToken}/pdf`,
      `/public/estimates/${estimate.body.publicToken}`,
      `/public/invoices/${randomBytes(24).toString("base64url")}`,
    ];
    for (const path of paths) {
      const res = await request(world.env.app, "GET", path);
      expect(res.status, path).toBeLessThan(500);
      const h = (name: string) => res.headers.get(name) ?? "";
      expect(h("x-content-type-options"), path).toBe("nosniff");
      expect(h("content-security-policy"), path).toMatch(/default-src 'none'/);
      expect(h("content-security-policy"), path).toMatch(/frame-ancestors 'none'/);
      expect(h("x-frame-options"), path).toBe("DENY");
      expect(h("referrer-policy"), path).toBe("no-referrer");
      expect(h("cache-control"), path).toMatch(/no-store/);
    }
  });
});
