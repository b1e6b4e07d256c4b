import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forgetRateLimits } from "@invoicing/core/limits/rate-limit";
import { setUserLimits } from "@invoicing/core/limits/user-limits";
import { createStorecoveProvider } from "@invoicing/core/peppol/storecove";
import { type CardPayments, startCardPayments } from "../support/card-payments";
import { createTestEnv, expectProblem, type TestEnv, type TestUser } from "../support/env";
import { startFakeStorecove, type FakeStorecove } from "../support/fake-storecove";
import { WIDGET as line } from "../support/line-items";

/**
 * API.md section 16: past its limit a request gets 429 "and nothing done". A key this container
 * verified a moment ago runs its route while its rate-limit place is taken (http/middleware.ts: the
 * place rides along with the first read, and only the table writes wait for it). A route that
 * changes something outside the table — a refund at the card processor, a registration at the
 * Peppol provider — must therefore wait for the place (and the key) before it calls out, or a
 * refused request would still move money or register a participant.
 *
 * The request refused here is the one that crosses the limit in a container that has not seen the
 * user refused yet (forgetRateLimits: a container with no memory of the bucket), the only case in
 * which a refused request's route runs at all. Time is the test's clock: nothing here is timed.
 */
let card: CardPayments<TestEnv>;
let env: TestEnv;
let storecove: FakeStorecove;

beforeAll(async () => {
  storecove = await startFakeStorecove();
  card = await startCardPayments(
    "refused_before_side_effects",
    (extraDeps) =>
      createTestEnv({
        extraDeps: {
          ...extraDeps,
          peppol: createStorecoveProvider({ apiKey: storecove.apiKey, apiBase: storecove.url }),
          // High enough for the setup; each test lowers its user's own limit.
          rateLimits: { requestsPerSecond: 1000, publicPerSecond: 1000 },
        },
      }),
    (world) => world,
  );
  env = card.world;
});

afterAll(async () => {
  await card?.fake.close();
  await storecove?.close();
});

/** Lowers the user's own limit to 1 per second (bursts of 2) and spends it: the next request is past it. */
async function pastItsLimit(user: TestUser): Promise<void> {
  await setUserLimits(env.deps, user.userId, { requestsPerSecond: 1 });
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) statuses.push((await user.call("GET", "/clients")).status);
  expect(statuses).toContain(429);
  // Another container: it verified the key a moment ago but has not seen this user refused.
  forgetRateLimits();
}

describe("a refused request changes nothing outside the table either", () => {
  it("a refund past the user's limit: 429, and no refund at the card processor", async () => {
    const alice = await env.user();
    const clientId = (await alice.call("POST", "/clients", { name: "Acme", email: "billing@acme.test" })).body.id;
    const draft = (await alice.call("POST", "/invoices", { clientId, lineItems: [line] })).body;
    expect((await alice.call("POST", `/invoices/${draft.id}/finalize`)).status).toBe(200);
    const invoice = (await alice.call("POST", `/invoices/${draft.id}/send`)).body;
    expect((await card.openPayLink(invoice)).status).toBe(303);
    const sessionId = (await alice.call("GET", `/invoices/${invoice.id}`)).body.cardProcessorCheckoutSessionId;
    const session = card.fake.completeSession(sessionId);
    expect((await card.stripeEvent("checkout.session.completed", session).send()).body.outcome).toBe("applied");
    const [payment] = (await alice.call("GET", `/invoices/${invoice.id}/payments`)).body;
    const refunds = () => card.fake.requests.filter((r) => r.method === "POST" && r.path === "/v1/refunds").length;
    const before = refunds();

    await pastItsLimit(alice);
    const res = await alice.call("POST", `/invoices/${invoice.id}/payments/${payment.id}/refund`);
    expectProblem(res, 429, "rate_limited");
    expect(refunds()).toBe(before);
    expect(card.fake.paymentIntents.get(session.payment_intent!)!.amount_refunded).toBe(0);
  });

  it("a Peppol registration past the user's limit: 429, and nothing registered at the provider", async () => {
    const bob = await env.user();
    const profile = await bob.call("PATCH", "/profile", {
      businessName: "Atelier Bruxelles SRL",
      address: { line1: "Rue Neuve 12", city: "Bruxelles", postalCode: "1000", country: "BE" },
      peppolId: "0208:0123456749",
    });
    expect(profile.status).toBe(200);
    const entities = storecove.legalEntities.size;

    await pastItsLimit(bob);
    expectProblem(await bob.call("PUT", "/profile/peppol-registration"), 429, "rate_limited");
    expect(storecove.legalEntities.size).toBe(entities);
  });
});
