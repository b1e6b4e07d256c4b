import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { op } from "../support/fault-proxy";
import { type CardPayments, startCardPayments } from "../support/card-payments";
import type { FakeStripe } from "../support/fake-stripe";
import { expectProblem, type TestUser } from "../support/env";
import { createFaultyEnv, type FaultyEnv } from "../reliability/harness";

/**
 * The refund's crash window: Stripe refunded, then our write failed. The answer is a 503; the
 * client's retry reads the same refundedAmount, sends Stripe the same idempotency key, gets the
 * first refund back (not a second one) and records it. DynamoDB's failure is real: a proxy in
 * front of DynamoDB Local answers the refund's transaction with 500s.
 */

let card: CardPayments<FaultyEnv>;
let fake: FakeStripe;
let faulty: FaultyEnv;
let alice: TestUser;

beforeAll(async () => {
  card = await startCardPayments(
    "refund_faults",
    (extraDeps) => createFaultyEnv({ extraDeps }),
    (world) => world.env,
  );
  ({ fake, world: faulty } = card);
  alice = await faulty.env.user();
});

afterAll(async () => {
  await faulty?.close();
  await fake?.close();
});

describe("a refund whose write fails after Stripe refunded", () => {
  it("answers 503, and the retry records the same refund: Stripe refunds once", async () => {
    const client = (await alice.call("POST", "/clients", { name: "Acme", email: "ap@acme.test" })).body;
    const draft = (
      await alice.call("POST", "/invoices", {
        clientId: client.id,
        lineItems: [{ description: "Work", unitPrice: "80.00" }],
      })
    ).body;
    await alice.call("POST", `/invoices/${draft.id}/finalize`);
    const invoice = (await alice.call("POST", `/invoices/${draft.id}/send`)).body;
    expect((await card.openPayLink(invoice)).status).toBe(303);
    const sessionId = (await alice.call("GET", `/invoices/${invoice.id}`)).body.cardProcessorCheckoutSessionId;
    const session = fake.completeSession(sessionId);
    const delivered = await card.stripeEvent("checkout.session.completed", session).send();
    expect(delivered.body.outcome).toBe("applied");
    const [payment] = (await alice.call("GET", `/invoices/${invoice.id}/payments`)).body;

    const fault = faulty.proxy.inject({
      match: op("TransactWriteItems", "PAYMENT#"),
      fault: "server-error",
      times: Infinity,
    });
    const failed = await faulty
      .as(alice)
      .call("POST", `/invoices/${invoice.id}/payments/${payment.id}/refund`, { amount: "30.00" });
    expectProblem(failed, 503, "service_unavailable");
    expect(fault.hits).toBeGreaterThan(0);
    fault.remove();
    // Stripe did refund; we recorded nothing.
    expect(fake.paymentIntents.get(session.payment_intent!)!.amount_refunded).toBe(3000);
    expect((await alice.call("GET", `/invoices/${invoice.id}/payments/${payment.id}`)).body.refundedAmount).toBe(
      "0.00",
    );

    const retried = await faulty
      .as(alice)
      .call("POST", `/invoices/${invoice.id}/payments/${payment.id}/refund`, { amount: "30.00" });
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ refundedAmount: "30.00", status: "succeeded" });
    const calls = fake.requests.filter((r) => r.method === "POST" && r.path === "/v1/refunds");
    expect(calls).toHaveLength(2);
    expect(calls[1]!.headers["idempotency-key"]).toBe(calls[0]!.headers["idempotency-key"]);
    expect(fake.refunds.size).toBe(1);
    expect(fake.paymentIntents.get(session.payment_intent!)!.amount_refunded).toBe(3000);
    expect((await alice.call("GET", `/invoices/${invoice.id}`)).body).toMatchObject({
      status: "sent",
      amountPaid: "50.00",
      amountDue: "30.00",
    });
  });
});
