import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStripeCardProcessor } from "@invoicing/core/payments/stripe";
import { signedStripeEvent, startFakeStripe, type FakeSession, type FakeStripe } from "../support/fake-stripe";
import { createTestEnv, expectProblem, request, type TestEnv, type TestUser } from "../support/env";

/**
 * Card payments end to end: the real `stripe` SDK against a local server that answers like Stripe's
 * API, and webhooks signed with the SDK's own test-header helper and verified for real.
 */
const SECRET_KEY = "sk_test_4eC39HqLyjWDarjtT1zdp7dc";
const WEBHOOK_SECRET = "whsec_test_card_processor";
const line = { description: "Widget", quantity: "3", unitPrice: "19.99", taxRate: "0.0825" }; // total 64.92

let fake: FakeStripe;
let env: TestEnv;
let alice: TestUser;
let clientId: number;

beforeAll(async () => {
  fake = await startFakeStripe();
  const payments = createStripeCardProcessor({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET, apiBase: fake.url });
  env = await createTestEnv({ extraDeps: { payments } });
  fake.now = () => env.clock.now;
  alice = await env.user();
  clientId = (await alice.call("POST", "/clients", { name: "Acme", email: "billing@acme.test" })).body.id;
});

afterAll(async () => {
  await fake?.close();
});

async function sentInvoice(user: TestUser = alice, cid = clientId, body: Record<string, unknown> = { lineItems: [line] }) {
  const created = await user.call("POST", "/invoices", { clientId: cid, ...body });
  expect(created.status).toBe(201);
  expect((await user.call("POST", `/invoices/${created.body.id}/finalize`)).status).toBe(200);
  const sent = await user.call("POST", `/invoices/${created.body.id}/send`);
  expect(sent.status).toBe(200);
  return sent.body;
}

/** A Stripe event as Stripe would POST it, signed with the webhook secret (or another). */
function deliver(type: string, session: object, options: { id?: string; secret?: string; signedAt?: Date; body?: string } = {}) {
  const { payload, header } = signedStripeEvent(type, session, {
    secret: options.secret ?? WEBHOOK_SECRET,
    now: env.clock.now,
    id: options.id,
    signedAt: options.signedAt,
  });
  return {
    payload,
    header,
    send: (headers: Record<string, string> = { "Stripe-Signature": header }) =>
      request(env.app, "POST", "/webhooks/card-processor", options.body ?? payload, { "Content-Type": "application/json; charset=utf-8", ...headers }),
  };
}

const sessionOf = (invoice: { cardProcessorCheckoutSessionId: string }): FakeSession => {
  const session = fake.sessions.get(invoice.cardProcessorCheckoutSessionId);
  if (!session) throw new Error("the fake Stripe has no such session");
  return session;
};

const createRequests = () => fake.requests.filter((r) => r.method === "POST" && r.path === "/v1/checkout/sessions");

describe("send with Stripe configured", () => {
  it("stores the session's link and id, and Stripe got the amount in cents, currency, metadata and an idempotency key", async () => {
    const before = createRequests().length;
    const invoice = await sentInvoice();
    const sent = createRequests().slice(before);
    expect(sent).toHaveLength(1);
    const req = sent[0]!;
    expect(req.headers.authorization).toBe(`Bearer ${SECRET_KEY}`);
    expect(req.headers["idempotency-key"]).toBe(`invoice-checkout:send:${alice.userId}:${invoice.id}:v3`);
    expect(req.body).toMatchObject({
      mode: "payment",
      line_items: [{ quantity: "1", price_data: { currency: "usd", unit_amount: "6492", product_data: { name: `Invoice ${invoice.invoiceNumber}` } } }],
      metadata: { userId: alice.userId, invoiceId: String(invoice.id), invoiceNumber: invoice.invoiceNumber },
      payment_intent_data: { metadata: { userId: alice.userId, invoiceId: String(invoice.id) } },
      customer_email: "billing@acme.test",
      success_url: `http://localhost:3000/public/invoices/${invoice.publicToken}?payment=success`,
      cancel_url: `http://localhost:3000/public/invoices/${invoice.publicToken}`,
    });

    const session = sessionOf(invoice);
    expect(invoice.cardProcessorCheckoutSessionId).toMatch(/^cs_test_/);
    expect(invoice.cardProcessorPaymentLink).toBe(session.url);
    const stored = (await alice.call("GET", `/invoices/${invoice.id}`)).body;
    expect(stored).toMatchObject({ cardProcessorPaymentLink: session.url, cardProcessorCheckoutSessionId: session.id, status: "sent" });
    expect(stored).not.toHaveProperty("cardProcessorSessionExpiresAt"); // internal
  });

  it("sends whole units for a zero-decimal currency, and makes no session for an amount it cannot charge exactly", async () => {
    const yen = await sentInvoice(alice, clientId, { currency: "JPY", lineItems: [{ description: "Consulting", unitPrice: "1500" }] });
    const req = createRequests().find((r) => (r.body.metadata as Record<string, string>).invoiceId === String(yen.id))!;
    expect((req.body.line_items as { price_data: unknown }[])[0]!.price_data).toMatchObject({ currency: "jpy", unit_amount: "1500" });
    expect(yen.cardProcessorPaymentLink).toBe(sessionOf(yen).url);

    const before = createRequests().length;
    const fractional = await sentInvoice(alice, clientId, { currency: "JPY", lineItems: [{ description: "Odd", unitPrice: "1500.50" }] });
    expect(fractional).toMatchObject({ status: "sent", cardProcessorPaymentLink: null, cardProcessorCheckoutSessionId: null });
    expect(createRequests().length).toBe(before);
  });

  it("still sends the invoice when Stripe fails; the pay button makes the session later", async () => {
    fake.failNext(500, 3); // the first try and the SDK's two retries
    const invoice = await sentInvoice();
    expect(invoice).toMatchObject({ status: "sent", cardProcessorPaymentLink: null, cardProcessorCheckoutSessionId: null });

    const pay = await request(env.app, "GET", `/public/invoices/${invoice.publicToken}/pay`);
    expect(pay.status).toBe(303);
    const stored = (await alice.call("GET", `/invoices/${invoice.id}`)).body;
    expect(stored.cardProcessorCheckoutSessionId).toMatch(/^cs_test_/);
    expect(pay.headers.get("location")).toBe(stored.cardProcessorPaymentLink);
  });
});

describe("POST /webhooks/card-processor", () => {
  it("a signed checkout.session.completed marks the invoice paid by card, once; replays change nothing", async () => {
    const invoice = await sentInvoice();
    const session = fake.completeSession(invoice.cardProcessorCheckoutSessionId);
    const event = deliver("checkout.session.completed", session);
    const first = await event.send();
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ received: true, outcome: "applied" });

    const paid = await alice.call("GET", `/invoices/${invoice.id}`);
    expect(paid.body).toMatchObject({
      status: "paid",
      paymentMethod: "card",
      paymentReference: session.payment_intent,
      amountPaid: "64.92",
      // the event was created 30 s before it was sent (signedStripeEvent)
      paidAt: new Date(Math.floor(env.clock.now.getTime() / 1000) * 1000 - 30_000).toISOString(),
    });

    // Stripe retries the same event, and may also send async_payment_succeeded for the session.
    const replay = await event.send();
    expect(replay.status).toBe(200);
    expect(replay.body.outcome).toBe("duplicate");
    const other = await deliver("checkout.session.async_payment_succeeded", session).send();
    expect(other.body.outcome).toBe("duplicate");
    const after = await alice.call("GET", `/invoices/${invoice.id}`);
    expect(after.headers.get("etag")).toBe(paid.headers.get("etag"));
    expect(after.body).toEqual(paid.body);

    const payments = await alice.call("GET", `/invoices/${invoice.id}/card-payments`);
    expect(payments.status).toBe(200);
    expect(payments.body).toEqual([
      expect.objectContaining({ sessionId: session.id, paymentReference: session.payment_intent, amount: "64.92", currency: "USD", status: "applied", reason: null }),
    ]);
  });

  it("concurrent deliveries of one event change the invoice once", async () => {
    const invoice = await sentInvoice();
    const etag = (await alice.call("GET", `/invoices/${invoice.id}`)).headers.get("etag");
    const event = deliver("checkout.session.completed", fake.completeSession(invoice.cardProcessorCheckoutSessionId));
    const results = await Promise.all(Array.from({ length: 6 }, () => event.send()));
    expect(results.map((r) => r.status)).toEqual(Array(6).fill(200));
    expect(results.filter((r) => r.body.outcome === "applied")).toHaveLength(1);
    expect(results.filter((r) => r.body.outcome === "duplicate")).toHaveLength(5);
    const after = await alice.call("GET", `/invoices/${invoice.id}`);
    expect(after.body.status).toBe("paid");
    expect(after.headers.get("etag")).toBe(`"${Number(JSON.parse(etag!)) + 1}"`);
  });

  it("refuses a missing, wrong, stale or tampered signature with 400 invalid_signature and changes nothing", async () => {
    const invoice = await sentInvoice();
    const before = await alice.call("GET", `/invoices/${invoice.id}`);
    const session = fake.completeSession(invoice.cardProcessorCheckoutSessionId);
    const genuine = deliver("checkout.session.completed", session);

    expectProblem(await genuine.send({}), 400, "invalid_signature");
    expectProblem(await genuine.send({ "Stripe-Signature": "t=1,v1=deadbeef" }), 400, "invalid_signature");
    expectProblem(await deliver("checkout.session.completed", session, { secret: "whsec_someone_else" }).send(), 400, "invalid_signature");
    const stale = deliver("checkout.session.completed", session, { signedAt: new Date(env.clock.now.getTime() - 3600_000) });
    expectProblem(await stale.send(), 400, "invalid_signature");
    // Signed for one body, sent with another (the amount changed).
    const tampered = genuine.payload.replace(`"amount_total":${session.amount_total}`, `"amount_total":1`);
    expect(tampered).not.toBe(genuine.payload);
    expectProblem(await request(env.app, "POST", "/webhooks/card-processor", tampered, { "Stripe-Signature": genuine.header }), 400, "invalid_signature");

    const after = await alice.call("GET", `/invoices/${invoice.id}`);
    expect(after.headers.get("etag")).toBe(before.headers.get("etag"));
    expect(after.body.status).toBe("sent");
    expect((await alice.call("GET", `/invoices/${invoice.id}/card-payments`)).body).toEqual([]);

    // The genuine delivery still works afterwards.
    expect((await genuine.send()).body.outcome).toBe("applied");
  });

  it("records a payment for a void invoice for refund instead of losing it", async () => {
    const invoice = await sentInvoice();
    expect((await alice.call("POST", `/invoices/${invoice.id}/void`)).status).toBe(200);
    const session = fake.completeSession(invoice.cardProcessorCheckoutSessionId);
    const event = deliver("checkout.session.completed", session);
    const res = await event.send();
    expect(res.status).toBe(200);
    expect(res.body.outcome).toBe("needs_refund");
    expect((await event.send()).body.outcome).toBe("duplicate");

    expect((await alice.call("GET", `/invoices/${invoice.id}`)).body).toMatchObject({ status: "void", paymentMethod: null, amountPaid: "0.00" });
    const payments = (await alice.call("GET", `/invoices/${invoice.id}/card-payments`)).body;
    expect(payments).toEqual([
      expect.objectContaining({ sessionId: session.id, amount: "64.92", currency: "USD", status: "needs_refund", reason: "invoice_void" }),
    ]);
  });

  it("records a card payment for an invoice already paid by other means for refund", async () => {
    const invoice = await sentInvoice();
    await alice.call("POST", `/invoices/${invoice.id}/mark-paid`, { paymentMethod: "bank_transfer", reference: "SEPA-1" });
    const res = await deliver("checkout.session.completed", fake.completeSession(invoice.cardProcessorCheckoutSessionId)).send();
    expect(res.body.outcome).toBe("needs_refund");
    expect((await alice.call("GET", `/invoices/${invoice.id}`)).body).toMatchObject({ status: "paid", paymentMethod: "bank_transfer", paymentReference: "SEPA-1" });
    expect((await alice.call("GET", `/invoices/${invoice.id}/card-payments`)).body[0]).toMatchObject({ status: "needs_refund", reason: "invoice_already_paid" });
  });

  it("waits for async_payment_succeeded when a session completes unpaid (a delayed payment method)", async () => {
    const invoice = await sentInvoice();
    const session = { ...sessionOf(invoice), status: "complete", payment_status: "unpaid", payment_intent: "pi_test_delayed" };
    expect((await deliver("checkout.session.completed", session).send()).body.outcome).toBe("ignored");
    expect((await alice.call("GET", `/invoices/${invoice.id}`)).body.status).toBe("sent");

    const succeeded = await deliver("checkout.session.async_payment_succeeded", { ...session, payment_status: "paid" }).send();
    expect(succeeded.body.outcome).toBe("applied");
    expect((await alice.call("GET", `/invoices/${invoice.id}`)).body).toMatchObject({ status: "paid", paymentReference: "pi_test_delayed" });
  });

  it("acknowledges other event types and sessions without our metadata without changing anything", async () => {
    const invoice = await sentInvoice();
    const etag = (await alice.call("GET", `/invoices/${invoice.id}`)).headers.get("etag");
    const expired = await deliver("checkout.session.expired", { ...sessionOf(invoice), status: "expired" }).send();
    expect(expired.body).toEqual({ received: true, outcome: "ignored" });
    const foreign = await deliver("checkout.session.completed", { ...fake.completeSession(invoice.cardProcessorCheckoutSessionId), metadata: {} }).send();
    expect(foreign.body.outcome).toBe("ignored");
    expect((await alice.call("GET", `/invoices/${invoice.id}`)).headers.get("etag")).toBe(etag);
  });

  it("needs no API key, and other methods are 405", async () => {
    const res = await request(env.app, "GET", "/webhooks/card-processor");
    expectProblem(res, 405, "method_not_allowed");
  });
});

describe("GET /public/invoices/{token}/pay", () => {
  it("redirects to the open session, and replaces an expired one with a new session", async () => {
    const invoice = await sentInvoice();
    const first = await request(env.app, "GET", `/public/invoices/${invoice.publicToken}/pay`);
    expect(first.status).toBe(303);
    expect(first.headers.get("location")).toBe(invoice.cardProcessorPaymentLink);

    env.clock.advance(25 * 3600_000); // Stripe's sessions live 24 hours
    const before = createRequests().length;
    const replaced = await request(env.app, "GET", `/public/invoices/${invoice.publicToken}/pay`);
    expect(replaced.status).toBe(303);
    const made = createRequests().slice(before);
    expect(made).toHaveLength(1);
    expect(made[0]!.headers["idempotency-key"]).not.toBe(`invoice-checkout:send:${alice.userId}:${invoice.id}:v3`);
    expect(made[0]!.body).toMatchObject({ line_items: [{ price_data: { unit_amount: "6492", currency: "usd" } }] });

    const stored = (await alice.call("GET", `/invoices/${invoice.id}`)).body;
    expect(stored.cardProcessorCheckoutSessionId).not.toBe(invoice.cardProcessorCheckoutSessionId);
    expect(replaced.headers.get("location")).toBe(stored.cardProcessorPaymentLink);
    expect(stored.cardProcessorPaymentLink).toBe(sessionOf(stored).url);

    // The new one is reused while it is open.
    const again = await request(env.app, "GET", `/public/invoices/${invoice.publicToken}/pay`);
    expect(again.headers.get("location")).toBe(stored.cardProcessorPaymentLink);
    expect(createRequests().length).toBe(before + 1);
  });

  it("the public page's pay button goes through /pay, so an expired session is never shown", async () => {
    const invoice = await sentInvoice();
    const page = await request(env.app, "GET", `/public/invoices/${invoice.publicToken}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`href="${env.deps.publicBaseUrl}/public/invoices/${invoice.publicToken}/pay"`);
    expect(page.text).not.toContain(`href="${invoice.cardProcessorPaymentLink}"`);
  });

  it("concurrent clicks on an expired session all land on one new session", async () => {
    const invoice = await sentInvoice();
    env.clock.advance(25 * 3600_000);
    const results = await Promise.all(Array.from({ length: 4 }, () => request(env.app, "GET", `/public/invoices/${invoice.publicToken}/pay`)));
    expect(results.map((r) => r.status)).toEqual([303, 303, 303, 303]);
    const stored = (await alice.call("GET", `/invoices/${invoice.id}`)).body;
    expect(new Set(results.map((r) => r.headers.get("location")))).toEqual(new Set([stored.cardProcessorPaymentLink]));
    expect(stored.cardProcessorCheckoutSessionId).not.toBe(invoice.cardProcessorCheckoutSessionId);
  });

  it("sends a paid invoice's payer back to the public page, and 404s drafts and unknown tokens", async () => {
    const invoice = await sentInvoice();
    await deliver("checkout.session.completed", fake.completeSession(invoice.cardProcessorCheckoutSessionId)).send();
    const paid = await request(env.app, "GET", `/public/invoices/${invoice.publicToken}/pay`);
    expect(paid.status).toBe(303);
    expect(paid.headers.get("location")).toBe(`/public/invoices/${invoice.publicToken}`);

    const draft = (await alice.call("POST", "/invoices", { clientId, lineItems: [line] })).body;
    expectProblem(await request(env.app, "GET", `/public/invoices/${draft.publicToken}/pay`), 404, "not_found");
    expectProblem(await request(env.app, "GET", `/public/invoices/${"A".repeat(32)}/pay`), 404, "not_found");
    expectProblem(await request(env.app, "GET", "/public/invoices/not-a-token/pay"), 404, "not_found");
  });

  it("does not redirect to a session that was paid before the webhook arrived", async () => {
    const invoice = await sentInvoice();
    fake.completeSession(invoice.cardProcessorCheckoutSessionId);
    const res = await request(env.app, "GET", `/public/invoices/${invoice.publicToken}/pay`);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/public/invoices/${invoice.publicToken}`);
  });
});

describe("without Stripe", () => {
  let plain: TestEnv;
  let bob: TestUser;
  let bobClient: number;

  beforeAll(async () => {
    plain = await createTestEnv();
    bob = await plain.user();
    bobClient = (await bob.call("POST", "/clients", { name: "Beta", email: "ap@beta.test" })).body.id;
  });

  it("send leaves the card payment fields null and calls no one", async () => {
    const before = fake.requests.length;
    const invoice = await sentInvoice(bob, bobClient);
    expect(invoice).toMatchObject({ status: "sent", cardProcessorPaymentLink: null, cardProcessorCheckoutSessionId: null });
    expect(fake.requests.length).toBe(before);
  });

  it("the pay button leads to the alternative payment link, or nowhere", async () => {
    const alt = "https://pay.example.com/inv/42";
    const withAlt = await sentInvoice(bob, bobClient, { lineItems: [line], altProcessorPaymentLink: alt });
    const res = await request(plain.app, "GET", `/public/invoices/${withAlt.publicToken}/pay`);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(alt);

    const without = await sentInvoice(bob, bobClient);
    expectProblem(await request(plain.app, "GET", `/public/invoices/${without.publicToken}/pay`), 404, "not_found");
  });

  it("the webhook refuses everything: nothing can be verified", async () => {
    const invoice = await sentInvoice(bob, bobClient);
    const payload = JSON.stringify({ id: "evt_x", object: "event", type: "checkout.session.completed", created: 1, data: { object: {} } });
    const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET });
    expectProblem(await request(plain.app, "POST", "/webhooks/card-processor", payload, { "Stripe-Signature": header }), 400, "invalid_signature");
    expect((await bob.call("GET", `/invoices/${invoice.id}`)).body.status).toBe("sent");
  });
});
