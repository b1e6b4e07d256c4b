import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { CardProcessorError } from "@invoicing/core/capabilities/card-processor";
import { createStripeCardProcessor, STRIPE_CALL, stripeWorstCaseMs } from "@invoicing/core/payments/stripe";
import { evaluateInfra, functionsOf } from "../../scripts/infra.mjs";

/**
 * Issue 30 H: the Stripe SDK's timeouts and retries fit inside the request's Lambda timeout, so a
 * hanging card processor ends in the app's own 503 problem, never API Gateway's bare 5xx. The budget
 * is checked against the Payments function's timeout as infra declares it, and the settings are
 * checked on the real SDK against a server that never answers: it gives up after exactly one retry.
 */
let server: Server;
let requests = 0;

beforeAll(async () => {
  server = createServer(() => {
    requests++; // and never answer
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

it("the worst case of a request's card processor calls leaves the Payments function time to answer", async () => {
  const infra = await evaluateInfra({ stage: "production", env: { EMAIL_SENDER: "billing@example.com" } });
  const payments = functionsOf(infra).find((fn) => fn.id === "Payments")!;
  const [seconds] = String(payments.timeout).split(" ");
  expect(payments.timeout).toBe("25 seconds");
  const worst = stripeWorstCaseMs(STRIPE_CALL, STRIPE_CALL.callsPerRequest);
  expect(worst).toBe(13_000);
  // At least 10 s left for the table's reads and writes and the answer.
  expect(Number(seconds) * 1000 - worst).toBeGreaterThanOrEqual(10_000);
});

it("a processor that never answers: one retry, then CardProcessorError 'unavailable'", async () => {
  const { port } = server.address() as AddressInfo;
  const processor = createStripeCardProcessor({
    secretKey: "sk_test_budget",
    webhookSecret: "whsec_budget",
    apiBase: `http://127.0.0.1:${port}`,
  });
  requests = 0;
  const error = await processor
    .createRefund({
      paymentIntentId: "pi_test_hanging",
      amountCents: 100n,
      currency: "EUR",
      idempotencyKey: "budget",
      userId: "u",
      invoiceId: 1,
      paymentId: 1,
    })
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(CardProcessorError);
  expect((error as CardProcessorError).kind).toBe("unavailable");
  expect(requests).toBe(1 + STRIPE_CALL.maxNetworkRetries);
});
