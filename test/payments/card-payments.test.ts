import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "@invoicing/functions/app/create-app";
import { type CardPayments, startCardPayments } from "../support/card-payments";
import type { FakeSession, FakeStripe } from "../support/fake-stripe";
import { createTestEnv, expectProblem, request, type TestEnv, type TestUser } from "../support/env";
import { WIDGET as line } from "../support/line-items";

/**
 * Card payments end to end: the real `stripe` SDK against a local server that answers like Stripe's
 * API, and webhooks signed with the SDK's own test-header helper and verified for real.
 */
let card: CardPayments<TestEnv>;
let fake: FakeStripe;
let env: TestEnv;
let alice: TestUser;
let clientId: number;

beforeAll(async () => {
  card = await startCardPayments(
    "card_payments",
    (extraDeps) => createTestEnv({ extraDeps }),
    (world) => world,
  );
  ({ fake, world: env } = card);
  alice = await env.user();
  clientId = (await alice.call("POST", "/clients", { name: "Acme", email: "billing@acme.test" })).body.id;
});

afterAll(async () => {
  await fake?.close();
});

async function sentInvoice(
  user: TestUser = alice,
  cid = clientId,
  body: Record<string, unknown> = { lineItems: [line] },
) {
  const created = await user.call("POST", "/invoices", { clientId: cid, ...body });
  expect(created.status).toBe(201);
  expect((await user.call("POST", `/invoices/${created.body.id}/finalize`)).status).toBe(200);
  const sent = await user.call("POST", `/invoices/${created.body.id}/send`);
  expect(sent.status).toBe(200);
  return sent.body;
}

const deliver: CardPayments<TestEnv>["stripeEvent"] = (...args) => card.stripeEvent(...args);

const sessionOf = (invoice: { cardProcessorCheckoutSessionId: string }): FakeSession => {
  const session = fake.sessions.get(invoice.cardProcessorCheckoutSessionId);
  if (!session) throw new Error("the fake Stripe has no such session");
  return session;
};

const openPayLink = (invoice: { publicToken: string }) => card.openPayLink(invoice);

/** A sent invoice whose pay link was opened: it has a checkout session. */
async function openedInvoice(
  user: TestUser = alice,
  cid = clientId,
  body: Record<string, unknown> = { lineItems: [line] },
) {
  const invoice = await sentInvoice(user, cid, body);
  expect((await openPayLink(invoice)).status).toBe(303);
  return (await user.call("GET", `/invoices/${invoice.id}`)).body;
}

const createRequests = () => fake.requests.filter((r) => r.method === "POST" && r.path === "/v1/checkout/sessions");

describe("send with Stripe configured, and the pay link", () => {
  it("send makes no call to the card processor and stores the pay link; opening it makes one session", async () => {
    const before = fake.requests.length;
    const invoice = await sentInvoice();
    expect(fake.requests.length).toBe(before); // send never calls the card processor
    expect(invoice).toMatchObject({
      cardProcessorPaymentLink: `http://localhost:3000/public/invoices/${invoice.publicToken}/pay`,
      cardProcessorCheckoutSessionId: null,
    });

    const opened = await openPayLink(invoice);
    expect(opened.status).toBe(303);
    const made = createRequests().slice(-1);
    expect(fake.requests.length).toBe(before + 1);
    const req = made[0]!;
    expect(req.headers.authorization).toBe(`Bearer ${card.secretKey}`);
    expect(req.headers["idempotency-key"]).toMatch(
      new RegExp(`^invoice-checkout:pay:${alice.userId}:${invoice.id}:v\\d+$`),
    );
    expect(req.body).toMatchObject({
      mode: "payment",
      line_items: [
        {
          quantity: "1",
          price_data: {
            currency: "usd",
            unit_amount: "6492",
            product_data: { name: `Invoice ${invoice.invoiceNumber}` },
          },
        },
      ],
      metadata: {
        invoicing_user_id: alice.userId,
        invoicing_invoice_id: String(invoice.id),
        invoicing_invoice_number: invoice.invoiceNumber,
        invoicing_signature: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      },
      payment_intent_data: { metadata: { invoicing_user_id: alice.userId, invoicing_invoice_id: String(invoice.id) } },
      customer_email: "billing@acme.test",
      success_url: `http://localhost:3000/public/invoices/${invoice.publicToken}?payment=success`,
      cancel_url: `http://localhost:3000/public/invoices/${invoice.publicToken}`,
    });
    // Namespaced only: no generic names another integration may also use.
    expect(Object.keys(req.body.metadata as object).every((k) => k.startsWith("invoicing_"))).toBe(true);

    const stored = (await alice.call("GET", `/invoices/${invoice.id}`)).body;
    const session = sessionOf(stored);
    expect(opened.headers.get("location")).toBe(session.url);
    expect(stored).toMatchObject({
      cardProcessorCheckoutSessionId: session.id,
      cardProcessorPaymentLink: invoice.cardProcessorPaymentLink,
      status: "sent",
    });
    expect(stored).not.toHaveProperty("cardProcessorSessionExpiresAt"); // internal
    expect(stored).not.toHaveProperty("cardProcessorSessionUrl"); // internal

    // A second open reuses the open session: no new one.
    const creates = createRequests().length;
    const again = await openPayLink(invoice);
    expect(again.headers.get("location")).toBe(session.url);
    expect(createRequests().length).toBe(creates);
  });

  it("a changed amountDue (a partial manual payment) makes a new session for the rest, and expires the old one", async () => {
    const invoice = await sentInvoice();
    const first = await openPayLink(invoice);
    const old = sessionOf((await alice.call("GET", `/invoices/${invoice.id}`)).body);
    expect(first.headers.get("location")).toBe(old.url);

    expect(
      (await alice.call("POST", `/invoices/${invoice.id}/payments`, { amount: "20.00", paymentMethod: "cash" })).status,
    ).toBe(201);
    const creates = createRequests().length;
    const second = await openPayLink(invoice);
    expect(createRequests().length).toBe(creates + 1);
    expect(createRequests().at(-1)!.body).toMatchObject({
      line_items: [{ price_data: { unit_amount: "4492", currency: "usd" } }],
    });
    const stored = (await alice.call("GET", `/invoices/${invoice.id}`)).body;
    expect(stored.cardProcessorCheckoutSessionId).not.toBe(old.id);
    expect(second.headers.get("location")).toBe(sessionOf(stored).url);
    expect(old.status).toBe("open"); // expired after the write, by the stream subscriber
    await env.drainStream();
    expect(old.status).toBe("expired"); // the old amount can no longer be paid

    // The card pays the rest: a card_processor payment of the amount the processor reports.
    const res = await deliver(
      "checkout.session.completed",
      fake.completeSession(stored.cardProcessorCheckoutSessionId),
    ).send();
    expect(res.body.outcome).toBe("applied");
    expect((await alice.call("GET", `/invoices/${invoice.id}`)).body).toMatchObject({
      status: "paid",
      amountPaid: "64.92",
      amountDue: "0.00",
      paymentMethod: "card",
    });
    const payments = (await alice.call("GET", `/invoices/${invoice.id}/payments`)).body;
    expect(payments.map((p: { amount: string; source: string }) => [p.amount, p.source])).toEqual([
      ["20.00", "manual"],
      ["44.92", "card_processor"],
    ]);
  });

  it("charges whole units in a zero-decimal currency, and makes no session for an amount it cannot charge exactly", async () => {
    const yen = await sentInvoice(alice, clientId, {
      currency: "JPY",
      lineItems: [{ description: "Consulting", unitPrice: "1500" }],
    });
    await openPayLink(yen);
    const req = createRequests().at(-1)!;
    expect((req.body.metadata as Record<string, string>).invoicing_invoice_id).toBe(String(yen.id));
    expect((req.body.line_items as { price_data: unknown }[])[0]!.price_data).toMatchObject({
      currency: "jpy",
      unit_amount: "1500",
    });

    const before = createRequests().length;
    const fractional = await sentInvoice(alice, clientId, {
      currency: "JPY",
      lineItems: [{ description: "Odd", unitPrice: "1500.50" }],
    });
    expectProblem(await openPayLink(fractional), 404, "not_found");
    expect(createRequests().length).toBe(before);
  });

  it("Stripe failing on open is a 503; the next open makes the session", async () => {
    const invoice = await sentInvoice();
    fake.failNext(500, 3); // the first try and the SDK's two retries
    expectProblem(await openPayLink(invoice), 503, "service_unavailable");
    const pay = await openPayLink(invoice);
    expect(pay.status).toBe(303);
    const stored = (await alice.call("GET", `/invoices/${invoice.id}`)).body;
    expect(pay.headers.get("location")).toBe(sessionOf(stored).url);
  });
});

describe("POST /webhooks/card-processor", () => {
  it("a signed checkout.session.completed marks the invoice paid by card, once; replays change nothing", async () => {
    const invoice = await openedInvoice();
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

    const payments = await alice.call("GET", `/invoices/${invoice.id}/payments`);
    expect(payments.status).toBe(200);
    expect(payments.body).toEqual([
      {
        id: expect.any(Number),
        invoiceId: invoice.id,
        amount: "64.92",
        paymentMethod: "card",
        paidAt: paid.body.paidAt,
        reference: session.payment_intent,
        source: "card_processor",
        status: "succeeded",
        refundedAmount: "0.00",
        createdAt: env.clock.now.toISOString(),
      },
    ]);
    // The old route is gone: its records are this list's card_processor payments.
    expectProblem(await alice.call("GET", `/invoices/${invoice.id}/card-payments`), 404, "not_found");
  });

  it("concurrent deliveries of one event change the invoice once", async () => {
    const invoice = await openedInvoice();
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
    const invoice = await openedInvoice();
    const before = await alice.call("GET", `/invoices/${invoice.id}`);
    const session = fake.completeSession(invoice.cardProcessorCheckoutSessionId);
    const genuine = deliver("checkout.session.completed", session);

    expectProblem(await genuine.send({}), 400, "invalid_signature");
    expectProblem(await genuine.send({ "Stripe-Signature": "t=1,v1=deadbeef" }), 400, "invalid_signature");
    expectProblem(
      await deliver("checkout.session.completed", session, { secret: "whsec_someone_else" }).send(),
      400,
      "invalid_signature",
    );
    const stale = deliver("checkout.session.completed", session, {
      signedAt: new Date(env.clock.now.getTime() - 3600_000),
    });
    expectProblem(await stale.send(), 400, "invalid_signature");
    // Signed for one body, sent with another (the amount changed).
    const tampered = genuine.payload.replace(`"amount_total":${session.amount_total}`, `"amount_total":1`);
    expect(tampered).not.toBe(genuine.payload);
    expectProblem(
      await request(env.app, "POST", "/webhooks/card-processor", tampered, { "Stripe-Signature": genuine.header }),
      400,
      "invalid_signature",
    );

    const after = await alice.call("GET", `/invoices/${invoice.id}`);
    expect(after.headers.get("etag")).toBe(before.headers.get("etag"));
    expect(after.body.status).toBe("sent");
    expect((await alice.call("GET", `/invoices/${invoice.id}/payments`)).body).toEqual([]);

    // The genuine delivery still works afterwards.
    expect((await genuine.send()).body.outcome).toBe("applied");
  });

  it("records a payment for a void invoice for refund instead of losing it", async () => {
    const invoice = await openedInvoice();
    expect((await alice.call("POST", `/invoices/${invoice.id}/void`)).status).toBe(200);
    const session = fake.completeSession(invoice.cardProcessorCheckoutSessionId);
    const event = deliver("checkout.session.completed", session);
    const res = await event.send();
    expect(res.status).toBe(200);
    expect(res.body.outcome).toBe("needs_refund");
    expect((await event.send()).body.outcome).toBe("duplicate");

    expect((await alice.call("GET", `/invoices/${invoice.id}`)).body).toMatchObject({
      status: "void",
      paymentMethod: null,
      amountPaid: "0.00",
    });
    const payments = (await alice.call("GET", `/invoices/${invoice.id}/payments`)).body;
    expect(payments).toEqual([
      expect.objectContaining({
        amount: "64.92",
        source: "card_processor",
        paymentMethod: "card",
        status: "needs_refund",
        reference: session.payment_intent,
      }),
    ]);
  });

  it("records a card payment for an invoice already paid by other means for refund", async () => {
    const invoice = await openedInvoice();
    await alice.call("POST", `/invoices/${invoice.id}/mark-paid`, {
      paymentMethod: "bank_transfer",
      reference: "SEPA-1",
    });
    const res = await deliver(
      "checkout.session.completed",
      fake.completeSession(invoice.cardProcessorCheckoutSessionId),
    ).send();
    expect(res.body.outcome).toBe("needs_refund");
    expect((await alice.call("GET", `/invoices/${invoice.id}`)).body).toMatchObject({
      status: "paid",
      paymentMethod: "bank_transfer",
      paymentReference: "SEPA-1",
    });
    const payments = (await alice.call("GET", `/invoices/${invoice.id}/payments`)).body;
    expect(payments.map((p: { source: string; status: string }) => [p.source, p.status])).toEqual([
      ["manual", "succeeded"],
      ["card_processor", "needs_refund"],
    ]);
    expect((await alice.call("GET", `/invoices/${invoice.id}`)).body.amountPaid).toBe("64.92"); // not counted twice
  });

  it("waits for async_payment_succeeded when a session completes unpaid (a delayed payment method)", async () => {
    const invoice = await openedInvoice();
    const session = {
      ...sessionOf(invoice),
      status: "complete",
      payment_status: "unpaid",
      payment_intent: "pi_test_delayed",
    };
    expect((await deliver("checkout.session.completed", session).send()).body.outcome).toBe("ignored");
    expect((await alice.call("GET", `/invoices/${invoice.id}`)).body.status).toBe("sent");

    const succeeded = await deliver("checkout.session.async_payment_succeeded", {
      ...session,
      payment_status: "paid",
    }).send();
    expect(succeeded.body.outcome).toBe("applied");
    expect((await alice.call("GET", `/invoices/${invoice.id}`)).body).toMatchObject({
      status: "paid",
      paymentReference: "pi_test_delayed",
    });
  });

  it("acknowledges other event types and sessions without our metadata without changing anything", async () => {
    const invoice = await openedInvoice();
    const etag = (await alice.call("GET", `/invoices/${invoice.id}`)).headers.get("etag");
    const expired = await deliver("checkout.session.expired", { ...sessionOf(invoice), status: "expired" }).send();
    expect(expired.body).toEqual({ received: true, outcome: "ignored" });
    const foreign = await deliver("checkout.session.completed", {
      ...fake.completeSession(invoice.cardProcessorCheckoutSessionId),
      metadata: {},
    }).send();
    expect(foreign.body.outcome).toBe("ignored");
    expect((await alice.call("GET", `/invoices/${invoice.id}`)).headers.get("etag")).toBe(etag);
  });

  it("ignores a paid session of another integration on the same account that uses generic userId/invoiceId metadata", async () => {
    const invoice = await openedInvoice();
    const etag = (await alice.call("GET", `/invoices/${invoice.id}`)).headers.get("etag");
    // Another app's session, for a few cents, naming our user and invoice the way the old metadata did.
    const theirs = {
      ...sessionOf(invoice),
      id: "cs_test_other_integration",
      amount_total: 1,
      payment_intent: "pi_test_other",
      status: "complete",
      payment_status: "paid",
      metadata: {
        userId: alice.userId,
        invoiceId: String(invoice.id),
        invoicing_user_id: alice.userId,
        invoicing_invoice_id: String(invoice.id),
      },
    };
    expect((await deliver("checkout.session.completed", theirs).send()).body.outcome).toBe("ignored");
    // Our own signed metadata copied onto a session for another amount does not verify either.
    const copied = { ...theirs, id: "cs_test_copied", metadata: sessionOf(invoice).metadata };
    expect((await deliver("checkout.session.completed", copied).send()).body.outcome).toBe("ignored");
    const after = await alice.call("GET", `/invoices/${invoice.id}`);
    expect(after.headers.get("etag")).toBe(etag);
    expect(after.body).toMatchObject({ status: "sent", amountPaid: "0.00" });
    expect((await alice.call("GET", `/invoices/${invoice.id}/payments`)).body).toEqual([]);
  });

  it("records a payment through a session made for an earlier, larger amount due for refund", async () => {
    const invoice = await openedInvoice();
    const old = sessionOf(invoice);
    // A manual payment of 10.00, and the old session (64.92) was not expired in time: more than is due.
    expect(
      (await alice.call("POST", `/invoices/${invoice.id}/payments`, { amount: "10.00", paymentMethod: "cash" })).status,
    ).toBe(201);
    const res = await deliver("checkout.session.completed", fake.completeSession(old.id)).send();
    expect(res.body.outcome).toBe("needs_refund");
    expect((await alice.call("GET", `/invoices/${invoice.id}`)).body).toMatchObject({
      status: "sent",
      amountPaid: "10.00",
    });
  });

  it("needs no API key, and other methods are 405", async () => {
    const res = await request(env.app, "GET", "/webhooks/card-processor");
    expectProblem(res, 405, "method_not_allowed");
  });
});

describe("GET /public/invoices/{token}/pay", () => {
  it("redirects to the open session, and replaces an expired one with a new session", async () => {
    const invoice = await openedInvoice();
    const first = await request(env.app, "GET", `/public/invoices/${invoice.publicToken}/pay`);
    expect(first.status).toBe(303);
    expect(first.headers.get("location")).toBe(sessionOf(invoice).url);

    env.clock.advance(25 * 3600_000); // Stripe's sessions live 24 hours
    const before = createRequests().length;
    const replaced = await request(env.app, "GET", `/public/invoices/${invoice.publicToken}/pay`);
    expect(replaced.status).toBe(303);
    const made = createRequests().slice(before);
    expect(made).toHaveLength(1);
    expect(made[0]!.headers["idempotency-key"]).not.toBe(createRequests()[before - 1]!.headers["idempotency-key"]);
    expect(made[0]!.body).toMatchObject({ line_items: [{ price_data: { unit_amount: "6492", currency: "usd" } }] });

    const stored = (await alice.call("GET", `/invoices/${invoice.id}`)).body;
    expect(stored.cardProcessorCheckoutSessionId).not.toBe(invoice.cardProcessorCheckoutSessionId);
    expect(replaced.headers.get("location")).toBe(sessionOf(stored).url);

    // The new one is reused while it is open.
    const again = await request(env.app, "GET", `/public/invoices/${invoice.publicToken}/pay`);
    expect(again.headers.get("location")).toBe(sessionOf(stored).url);
    expect(createRequests().length).toBe(before + 1);
  });

  it("the public page's pay button goes through /pay, so an expired session is never shown", async () => {
    const invoice = await openedInvoice();
    const page = await request(env.app, "GET", `/public/invoices/${invoice.publicToken}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`href="${env.deps.publicBaseUrl}/public/invoices/${invoice.publicToken}/pay"`);
    expect(page.text).not.toContain(`href="${sessionOf(invoice).url}"`);
  });

  // Issue 38: 10 concurrent first opens made 6 checkout-session calls (one session, thanks to the
  // idempotency key, but six calls against the account's shared rate limit).
  it("10 concurrent first opens of a pay link make one checkout-session call, and all land on its session", async () => {
    const invoice = await sentInvoice();
    const before = createRequests().length;
    const results = await Promise.all(Array.from({ length: 10 }, () => openPayLink(invoice)));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(303));
    expect(createRequests().length - before).toBe(1);
    const stored = (await alice.call("GET", `/invoices/${invoice.id}`)).body;
    expect(new Set(results.map((r) => r.headers.get("location")))).toEqual(new Set([sessionOf(stored).url]));
  });

  it("concurrent clicks on an expired session all land on one new session", async () => {
    const invoice = await openedInvoice();
    env.clock.advance(25 * 3600_000);
    const results = await Promise.all(
      Array.from({ length: 4 }, () => request(env.app, "GET", `/public/invoices/${invoice.publicToken}/pay`)),
    );
    expect(results.map((r) => r.status)).toEqual([303, 303, 303, 303]);
    const stored = (await alice.call("GET", `/invoices/${invoice.id}`)).body;
    expect(new Set(results.map((r) => r.headers.get("location")))).toEqual(new Set([sessionOf(stored).url]));
    expect(stored.cardProcessorCheckoutSessionId).not.toBe(invoice.cardProcessorCheckoutSessionId);
  });

  it("sends a paid invoice's payer back to the public page, and 404s drafts and unknown tokens", async () => {
    const invoice = await openedInvoice();
    await deliver("checkout.session.completed", fake.completeSession(invoice.cardProcessorCheckoutSessionId)).send();
    const paid = await request(env.app, "GET", `/public/invoices/${invoice.publicToken}/pay`);
    expect(paid.status).toBe(303);
    expect(paid.headers.get("location")).toBe(`/public/invoices/${invoice.publicToken}`);

    const draft = (await alice.call("POST", "/invoices", { clientId, lineItems: [line] })).body;
    expectProblem(await request(env.app, "GET", `/public/invoices/${draft.publicToken}/pay`), 404, "not_found");
    expectProblem(await request(env.app, "GET", `/public/invoices/${"A".repeat(32)}/pay`), 404, "not_found");
    expectProblem(await request(env.app, "GET", "/public/invoices/not-a-token/pay"), 404, "not_found");
  });

  // Issue 29, finding 4: every open used to ask the processor (sessions.retrieve), so one public
  // link could push the shared Stripe account into its rate limit for every user.
  it("50 opens of the pay link make one session and ask the processor nothing more", async () => {
    const before = fake.requests.length;
    const invoice = await sentInvoice();
    const opens = [];
    for (let i = 0; i < 50; i++) opens.push(await openPayLink(invoice));
    const stored = (await alice.call("GET", `/invoices/${invoice.id}`)).body;
    expect(new Set(opens.map((r) => `${r.status} ${r.headers.get("location")}`))).toEqual(
      new Set([`303 ${sessionOf(stored).url}`]),
    );
    expect(fake.requests.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/checkout/sessions"]);
  });

  it("reuses the stored session while 10 minutes or more of it are left, then makes a new one", async () => {
    const invoice = await openedInvoice();
    const expiresAt = sessionOf(invoice).expires_at * 1000;
    const before = fake.requests.length;
    env.clock.set(new Date(expiresAt - 10 * 60_000).toISOString());
    expect((await openPayLink(invoice)).headers.get("location")).toBe(sessionOf(invoice).url);
    expect(fake.requests.length).toBe(before);
    env.clock.set(new Date(expiresAt - 10 * 60_000 + 1).toISOString());
    const replaced = await openPayLink(invoice);
    expect(fake.requests.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/checkout/sessions"]);
    expect(replaced.headers.get("location")).not.toBe(sessionOf(invoice).url);
  });

  it("a session paid before its webhook: the link leads to it until the webhook makes the invoice paid", async () => {
    const invoice = await openedInvoice();
    const session = fake.completeSession(invoice.cardProcessorCheckoutSessionId);
    expect((await openPayLink(invoice)).headers.get("location")).toBe(session.url);
    await deliver("checkout.session.completed", session).send();
    const res = await openPayLink(invoice);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/public/invoices/${invoice.publicToken}`);
  });
});

describe("open checkout sessions end with their invoice", () => {
  const expireRequests = (id: string) =>
    fake.requests.filter((r) => r.method === "POST" && r.path === `/v1/checkout/sessions/${id}/expire`);

  /** An invoice with an open session, and the stream read up to it: what follows is the test's own. */
  async function openedAndStreamed() {
    const invoice = await openedInvoice();
    await env.drainStream();
    return invoice;
  }

  it("voiding an invoice expires its open session, after the write, from the stream", async () => {
    const invoice = await openedAndStreamed();
    expect((await alice.call("POST", `/invoices/${invoice.id}/void`)).status).toBe(200);
    expect(expireRequests(invoice.cardProcessorCheckoutSessionId)).toHaveLength(0); // not within the request
    await env.drainStream();
    expect(expireRequests(invoice.cardProcessorCheckoutSessionId)).toHaveLength(1);
    expect(sessionOf(invoice).status).toBe("expired");
    // The pay link now leads back to the public page.
    expect((await openPayLink(invoice)).headers.get("location")).toBe(`/public/invoices/${invoice.publicToken}`);
  });

  it("a payment that completes the invoice expires its open session; a partial one does not", async () => {
    const invoice = await openedAndStreamed();
    expect(
      (await alice.call("POST", `/invoices/${invoice.id}/payments`, { amount: "4.92", paymentMethod: "cash" })).status,
    ).toBe(201);
    await env.drainStream();
    expect(expireRequests(invoice.cardProcessorCheckoutSessionId)).toHaveLength(0);
    expect(sessionOf(invoice).status).toBe("open");
    expect(
      (await alice.call("POST", `/invoices/${invoice.id}/mark-paid`, { paymentMethod: "bank_transfer" })).status,
    ).toBe(200);
    await env.drainStream();
    expect(expireRequests(invoice.cardProcessorCheckoutSessionId)).toHaveLength(1);
    expect(sessionOf(invoice).status).toBe("expired");
  });

  it("a record seen again (a retried batch) fails nothing, and its events stay stored once", async () => {
    const invoice = await openedAndStreamed();
    expect((await alice.call("POST", `/invoices/${invoice.id}/void`)).status).toBe(200);
    await env.drainStream();
    expect(sessionOf(invoice).status).toBe("expired");
    // A new reader reads the whole stream again: the processor refuses the expired session, which is fine.
    const again = env.newStreamReader();
    try {
      expect(await again.drain()).toBeGreaterThan(0);
    } finally {
      again.close();
    }
    expect(sessionOf(invoice).status).toBe("expired");
    const voided = await alice.call("GET", `/events?type=invoice.voided&resourceType=invoice&resourceId=${invoice.id}`);
    expect(voided.body).toHaveLength(1);
  });

  it("the card processor failing to expire fails neither the void nor the stream; a payment then is needs_refund", async () => {
    const invoice = await openedAndStreamed();
    const res = await alice.call("POST", `/invoices/${invoice.id}/void`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("void");
    fake.failNext(500, 2); // the expire and its one retry
    await env.drainStream();
    expect(expireRequests(invoice.cardProcessorCheckoutSessionId)).toHaveLength(2);
    expect(sessionOf(invoice).status).toBe("open"); // still payable: such a payment becomes needs_refund
    // The record was not failed: the next drain neither asks again nor stores its events twice.
    await env.drainStream();
    expect(expireRequests(invoice.cardProcessorCheckoutSessionId)).toHaveLength(2);
    const voided = await alice.call("GET", `/events?type=invoice.voided&resourceType=invoice&resourceId=${invoice.id}`);
    expect(voided.body).toHaveLength(1);
    const paid = await deliver(
      "checkout.session.completed",
      fake.completeSession(invoice.cardProcessorCheckoutSessionId),
    ).send();
    expect(paid.body.outcome).toBe("needs_refund");
  });

  it("while the card processor is down, the records after the void are not held back", async () => {
    const invoice = await openedAndStreamed();
    expect((await alice.call("POST", `/invoices/${invoice.id}/void`)).status).toBe(200);
    const client = await alice.call("POST", "/clients", { name: "After the void" });
    fake.failNext(500, 2);
    await env.drainStream();
    expect(sessionOf(invoice).status).toBe("open");
    const created = await alice.call(
      "GET",
      `/events?type=client.created&resourceType=client&resourceId=${client.body.id}`,
    );
    expect(created.body).toHaveLength(1);
  });
});

describe("POST /invoices/{id}/payments/{paymentId}/refund", () => {
  const refundRequests = (pi: string) =>
    fake.requests.filter((r) => r.method === "POST" && r.path === "/v1/refunds" && r.body.payment_intent === pi);

  /** An invoice paid by card through its pay link, and that card payment. */
  async function paidByCard() {
    const invoice = await openedInvoice();
    const session = fake.completeSession(invoice.cardProcessorCheckoutSessionId);
    expect((await deliver("checkout.session.completed", session).send()).body.outcome).toBe("applied");
    const [payment] = (await alice.call("GET", `/invoices/${invoice.id}/payments`)).body;
    return { invoice, payment, pi: session.payment_intent! };
  }

  it("refunds a card payment whole through Stripe: status refunded, amountPaid back, the paid invoice reopens", async () => {
    const { invoice, payment, pi } = await paidByCard();
    const res = await alice.call("POST", `/invoices/${invoice.id}/payments/${payment.id}/refund`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...payment, status: "refunded", refundedAmount: "64.92" });
    const sent = refundRequests(pi);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body).toMatchObject({
      payment_intent: pi,
      amount: "6492",
      metadata: {
        invoicing_user_id: alice.userId,
        invoicing_invoice_id: String(invoice.id),
        invoicing_payment_id: String(payment.id),
      },
    });
    expect(sent[0]!.headers["idempotency-key"]).toBe(
      `payment-refund:${alice.userId}:${invoice.id}:${payment.id}:0.00+64.92`,
    );
    expect(fake.paymentIntents.get(pi)!.amount_refunded).toBe(6492);
    expect((await alice.call("GET", `/invoices/${invoice.id}`)).body).toMatchObject({
      status: "sent",
      amountPaid: "0.00",
      amountDue: "64.92",
      paidAt: null,
      paymentMethod: null,
      paymentReference: null,
    });
    expect((await alice.call("GET", `/invoices/${invoice.id}/payments/${payment.id}`)).body).toEqual(res.body);
    // Nothing is left to refund.
    expectProblem(
      await alice.call("POST", `/invoices/${invoice.id}/payments/${payment.id}/refund`),
      422,
      "refund_not_possible",
    );
    expect(refundRequests(pi)).toHaveLength(1);
  });

  it("refunds in parts; more than is left is refund_not_possible and asks Stripe nothing", async () => {
    const { invoice, payment, pi } = await paidByCard();
    const part = await alice.call("POST", `/invoices/${invoice.id}/payments/${payment.id}/refund`, { amount: "10.00" });
    expect(part.status).toBe(200);
    expect(part.body).toMatchObject({ status: "succeeded", refundedAmount: "10.00" });
    expect((await alice.call("GET", `/invoices/${invoice.id}`)).body).toMatchObject({
      status: "sent",
      amountPaid: "54.92",
      amountDue: "10.00",
    });

    expectProblem(
      await alice.call("POST", `/invoices/${invoice.id}/payments/${payment.id}/refund`, { amount: "54.93" }),
      422,
      "refund_not_possible",
    );
    expect(refundRequests(pi)).toHaveLength(1);
    for (const amount of ["0", "-1.00", "1.001", "abc"]) {
      expectProblem(
        await alice.call("POST", `/invoices/${invoice.id}/payments/${payment.id}/refund`, { amount }),
        400,
        "validation_error",
      );
    }
    const rest = await alice.call("POST", `/invoices/${invoice.id}/payments/${payment.id}/refund`, {});
    expect(rest.body).toMatchObject({ status: "refunded", refundedAmount: "64.92" });
    expect(refundRequests(pi).map((r) => r.body.amount)).toEqual(["1000", "5492"]);
    expect((await alice.call("GET", `/invoices/${invoice.id}`)).body).toMatchObject({
      amountPaid: "0.00",
      amountDue: "64.92",
    });
  });

  it("a needs_refund payment is refunded without changing any amount", async () => {
    const invoice = await openedInvoice();
    expect((await alice.call("POST", `/invoices/${invoice.id}/mark-paid`, { paymentMethod: "cash" })).status).toBe(200);
    // The client paid by card anyway (the session's expiry came too late).
    const session = { ...sessionOf(invoice), status: "open" as const };
    fake.sessions.set(session.id, session);
    expect((await deliver("checkout.session.completed", fake.completeSession(session.id)).send()).body.outcome).toBe(
      "needs_refund",
    );
    const card = (await alice.call("GET", `/invoices/${invoice.id}/payments`)).body.find(
      (p: { source: string }) => p.source === "card_processor",
    );
    const res = await alice.call("POST", `/invoices/${invoice.id}/payments/${card.id}/refund`);
    expect(res.body).toMatchObject({ status: "refunded", refundedAmount: "64.92" });
    expect((await alice.call("GET", `/invoices/${invoice.id}`)).body).toMatchObject({
      status: "paid",
      amountPaid: "64.92",
      paymentMethod: "cash",
    });
  });

  it("a manual payment is refund_not_possible; a card payment cannot be deleted", async () => {
    const { invoice, payment } = await paidByCard();
    expectProblem(
      await alice.call("DELETE", `/invoices/${invoice.id}/payments/${payment.id}`),
      422,
      "payment_not_deletable",
    );
    const other = await sentInvoice();
    const manual = (
      await alice.call("POST", `/invoices/${other.id}/payments`, { amount: "1.00", paymentMethod: "cash" })
    ).body;
    const before = fake.requests.length;
    expectProblem(
      await alice.call("POST", `/invoices/${other.id}/payments/${manual.id}/refund`),
      422,
      "refund_not_possible",
    );
    expect(fake.requests.length).toBe(before);
    expectProblem(await alice.call("POST", `/invoices/${other.id}/payments/999999/refund`), 404, "not_found");
  });

  it("without a card processor configured, a card payment's refund is refund_not_possible", async () => {
    const { invoice, payment } = await paidByCard();
    const noProcessor = createApp({ ...env.deps, payments: undefined });
    const res = await request(noProcessor, "POST", `/invoices/${invoice.id}/payments/${payment.id}/refund`, undefined, {
      Authorization: `Bearer ${alice.key}`,
    });
    expectProblem(res, 422, "refund_not_possible");
    expect((await alice.call("GET", `/invoices/${invoice.id}`)).body.status).toBe("paid");
  });

  it("Stripe refunds once when its response is lost: the SDK's retry carries the same key", async () => {
    const { invoice, payment, pi } = await paidByCard();
    fake.dropResponseAfterApplying((method, path) => method === "POST" && path === "/v1/refunds");
    const res = await alice.call("POST", `/invoices/${invoice.id}/payments/${payment.id}/refund`, { amount: "4.92" });
    expect(res.status).toBe(200);
    expect(res.body.refundedAmount).toBe("4.92");
    const sent = refundRequests(pi);
    expect(sent).toHaveLength(2); // the lost one and the retry
    expect(sent[1]!.headers["idempotency-key"]).toBe(sent[0]!.headers["idempotency-key"]);
    expect([...fake.refunds.values()].filter((r) => r.payment_intent === pi)).toHaveLength(1);
    expect(fake.paymentIntents.get(pi)!.amount_refunded).toBe(492);
  });

  it("concurrent refunds: each refund Stripe made is recorded once, never more than was paid", async () => {
    const { invoice, payment, pi } = await paidByCard();
    const results = await Promise.all(
      Array.from({ length: 4 }, () =>
        alice.call("POST", `/invoices/${invoice.id}/payments/${payment.id}/refund`, { amount: "30.00" }),
      ),
    );
    // Only two refunds of 30.00 fit into 64.92; requests that read the same refundedAmount share a
    // Stripe idempotency key, hence a refund.
    for (const r of results) if (r.status !== 200) expectProblem(r, 422, "refund_not_possible");
    const made = [...fake.refunds.values()].filter((r) => r.payment_intent === pi);
    const keys = new Set(
      refundRequests(pi)
        .filter((r) => r.headers["idempotency-key"])
        .map((r) => r.headers["idempotency-key"]),
    );
    expect(made.length).toBeLessThanOrEqual(2);
    expect(made.length).toBeLessThanOrEqual(keys.size);
    const after = (await alice.call("GET", `/invoices/${invoice.id}/payments/${payment.id}`)).body;
    expect(after.refundedAmount).toBe(made.length === 2 ? "60.00" : "30.00");
    expect(fake.paymentIntents.get(pi)!.amount_refunded).toBe(made.length * 3000);
    expect((await alice.call("GET", `/invoices/${invoice.id}`)).body.amountPaid).toBe(
      made.length === 2 ? "4.92" : "34.92",
    );
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
    expect(invoice).toMatchObject({
      status: "sent",
      cardProcessorPaymentLink: null,
      cardProcessorCheckoutSessionId: null,
    });
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
    const payload = JSON.stringify({
      id: "evt_x",
      object: "event",
      type: "checkout.session.completed",
      created: 1,
      data: { object: {} },
    });
    const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: card.webhookSecret });
    expectProblem(
      await request(plain.app, "POST", "/webhooks/card-processor", payload, { "Stripe-Signature": header }),
      400,
      "invalid_signature",
    );
    expect((await bob.call("GET", `/invoices/${invoice.id}`)).body.status).toBe("sent");
  });
});
