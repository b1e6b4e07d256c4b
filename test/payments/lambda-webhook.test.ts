import Stripe from "stripe";
import { handle } from "hono/aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "@invoicing/core/keys/api-keys";
import { createApp } from "@invoicing/functions/app/create-app";
import { cardProcessor } from "@invoicing/functions/capabilities/card-processor";
import { createDeps } from "@invoicing/functions/capabilities/create-deps";
import { httpApiEvent, httpApiResponse } from "../deploy/lambda";
import { startFakeStripe, type FakeStripe } from "../support/fake-stripe";
import { createTestEnv, type TestEnv } from "../support/env";

/**
 * The production wiring (createDeps from the environment: STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET,
 * STRIPE_API_BASE) behind the Lambda handler, driven with real API Gateway v2 events: the signature
 * is checked over the body exactly as API Gateway hands it over, plain or base64-encoded.
 */
const SECRET_KEY = "sk_test_lambda_wiring";
const WEBHOOK_SECRET = "whsec_lambda_wiring";

let fake: FakeStripe;
let env: TestEnv;
let handler: ReturnType<typeof handle>;
let key: string;

beforeAll(async () => {
  fake = await startFakeStripe();
  env = await createTestEnv(); // a fresh table; the handler below gets its own deps from the environment
  const deps = createDeps(
    {
      TABLE_NAME: env.tableName,
      DYNAMODB_ENDPOINT: env.endpoint,
      AWS_REGION: "local",
      PUBLIC_BASE_URL: "https://invoices.example.com",
      STRIPE_SECRET_KEY: SECRET_KEY,
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_API_BASE: fake.url,
    },
    [cardProcessor],
  );
  handler = handle(createApp(deps));
  key = (await createApiKey(deps.db, "lambda-user", "test", new Date())).key;
});

afterAll(async () => {
  await fake?.close();
});

async function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  base64 = false,
) {
  const text = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
  const event = httpApiEvent(method, path, {
    headers: {
      authorization: `Bearer ${key}`,
      ...(text === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    body: text,
    base64,
  });
  // `as never`: hono types a v2 event's body as string | null, aws-lambda's as string | undefined.
  return httpApiResponse({ ok: true, value: await handler(event as never) });
}

describe("card payments through the Lambda handler", () => {
  it.each([false, true])(
    "the pay link makes a session; a signed webhook (base64 body: %s) pays the invoice once",
    async (base64) => {
      // Each step's answer is checked with its body, so a refused step names itself.
      const client = await call("POST", "/clients", { name: "Lambda Co", email: "ap@lambda.test" });
      expect(client.status, JSON.stringify(client.body)).toBe(201);
      const invoice = await call("POST", "/invoices", {
        clientId: client.body.id,
        lineItems: [{ description: "Work", unitPrice: "100.00" }],
      });
      expect(invoice.status, JSON.stringify(invoice.body)).toBe(201);
      const finalized = await call("POST", `/invoices/${invoice.body.id}/finalize`);
      expect(finalized.status, JSON.stringify(finalized.body)).toBe(200);
      const calls = fake.requests.length;
      const sent = await call("POST", `/invoices/${invoice.body.id}/send`);
      expect(sent.status, JSON.stringify(sent.body)).toBe(200);
      expect(fake.requests.length).toBe(calls); // send never calls Stripe
      const link = `https://invoices.example.com/public/invoices/${sent.body.publicToken}/pay`;
      expect(sent.body.cardProcessorPaymentLink).toBe(link);
      const opened = await call("GET", new URL(link).pathname, undefined, { authorization: "" });
      expect(opened.status).toBe(303);
      const stored = await call("GET", `/invoices/${invoice.body.id}`);
      const session = fake.sessions.get(stored.body.cardProcessorCheckoutSessionId);
      expect(session).toBeDefined();
      expect(opened.headers.location).toBe(session!.url);
      expect(session!.success_url).toBe(
        `https://invoices.example.com/public/invoices/${sent.body.publicToken}?payment=success`,
      );
      expect(fake.requests.at(-1)!.headers.authorization).toBe(`Bearer ${SECRET_KEY}`);

      const payload = JSON.stringify({
        id: `evt_lambda_${base64}`,
        object: "event",
        created: Math.floor(Date.now() / 1000),
        type: "checkout.session.completed",
        data: { object: fake.completeSession(session!.id) },
      });
      const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET });
      const webhook = () =>
        call("POST", "/webhooks/card-processor", payload, { authorization: "", "stripe-signature": signature }, base64);
      expect((await webhook()).body).toEqual({ received: true, outcome: "applied" });
      expect((await webhook()).body).toEqual({ received: true, outcome: "duplicate" });
      const paid = await call("GET", `/invoices/${invoice.body.id}`);
      expect(paid.body).toMatchObject({
        status: "paid",
        paymentMethod: "card",
        amountPaid: "100.00",
        paymentReference: session!.payment_intent,
      });

      const forged = await call(
        "POST",
        "/webhooks/card-processor",
        payload.replace("100", "101"),
        { "stripe-signature": signature },
        base64,
      );
      expect(forged.status).toBe(400);
      expect(forged.body.code).toBe("invalid_signature");
    },
  );
});
