import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CardPayments, startCardPayments } from "../support/card-payments";
import { createTestEnv, type TestEnv, type TestUser } from "../support/env";
import type { FakeStripe } from "../support/fake-stripe";
import { WIDGET as line } from "../support/line-items";

/**
 * Card payments after a credit note (API.md sections 14 and 17): the pay link charges the new
 * amountDue, and card money for more than it (a session made before the credit) is recorded as
 * needs_refund, never counted. The real `stripe` SDK against the local Stripe stand-in.
 */
let card: CardPayments<TestEnv>;
let fake: FakeStripe;
let env: TestEnv;
let alice: TestUser;
let clientId: number;

beforeAll(async () => {
  card = await startCardPayments(
    "credit_notes",
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

const openPayLink = (invoice: { publicToken: string }) => card.openPayLink(invoice);
const sessionsMade = () => fake.requests.filter((r) => r.method === "POST" && r.path === "/v1/checkout/sessions");
const get = async (id: number) => (await alice.call("GET", `/invoices/${id}`)).body;
const deliver = (session: object) => card.stripeEvent("checkout.session.completed", session).send();

describe("card payments limited by the credited amountDue", () => {
  it("the pay link charges what is due after the credit note; the earlier session's payment is needs_refund", async () => {
    // 3 × 19.99 at 8.25 %: 64.92. A credit note of one unit: 19.99 + 1.65 = 21.64; 43.28 left due.
    const created = (await alice.call("POST", "/invoices", { clientId, lineItems: [line] })).body;
    await alice.call("POST", `/invoices/${created.id}/finalize`);
    const invoice = (await alice.call("POST", `/invoices/${created.id}/send`)).body;
    expect((await openPayLink(invoice)).status).toBe(303);
    const before = await get(invoice.id);
    const oldSession = before.cardProcessorCheckoutSessionId as string;
    expect(sessionsMade().at(-1)!.body).toMatchObject({ line_items: [{ price_data: { unit_amount: "6492" } }] });

    const note = await alice.call("POST", `/invoices/${invoice.id}/credit-notes`, {
      lineItems: [{ invoiceLineId: 1, quantity: "1" }],
    });
    expect(note.status).toBe(201);
    expect(note.body.total).toBe("21.64");
    expect(await get(invoice.id)).toMatchObject({ amountDue: "43.28", creditedAmount: "21.64" });

    // The amount due changed: the link makes a new session for it.
    expect((await openPayLink(invoice)).status).toBe(303);
    expect(sessionsMade().at(-1)!.body).toMatchObject({ line_items: [{ price_data: { unit_amount: "4328" } }] });
    const after = await get(invoice.id);
    expect(after.cardProcessorCheckoutSessionId).not.toBe(oldSession);

    // The client had paid the old session (64.92) meanwhile: more than is due, so it is kept for refund.
    const stale = await deliver(fake.completeSession(oldSession));
    expect(stale.body.outcome).toBe("needs_refund");
    expect(await get(invoice.id)).toMatchObject({ status: "sent", amountPaid: "0.00", amountDue: "43.28" });

    // The new session pays exactly what is due: the invoice is paid.
    const paid = await deliver(fake.completeSession(after.cardProcessorCheckoutSessionId));
    expect(paid.body.outcome).toBe("applied");
    expect(await get(invoice.id)).toMatchObject({
      status: "paid",
      amountPaid: "43.28",
      creditedAmount: "21.64",
      amountDue: "0.00",
      paymentMethod: "card",
    });
    const payments = (await alice.call("GET", `/invoices/${invoice.id}/payments`)).body;
    expect(payments.map((p: { amount: string; status: string }) => [p.amount, p.status])).toEqual([
      ["64.92", "needs_refund"],
      ["43.28", "succeeded"],
    ]);
  });
});
