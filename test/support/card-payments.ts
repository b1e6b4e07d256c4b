import type { Deps } from "@invoicing/core/deps";
import { request, type TestEnv } from "./env";
import { type FakeStripe, signedStripeEvent, startStripeCardProcessor } from "./fake-stripe";

/**
 * A card-payment test's world: the local Stripe stand-in, the service's real Stripe adapter pointed
 * at it, and an env (made by `makeEnv`, so a faulty env or a pinned clock fit too) whose clock the
 * stand-in keeps. Keys are named for the test so that no two files share a secret by accident.
 */
export async function startCardPayments<World>(
  name: string,
  makeEnv: (extraDeps: Partial<Deps>) => Promise<World>,
  envOf: (world: World) => TestEnv,
): Promise<CardPayments<World>> {
  const keys = { secretKey: `sk_test_${name}`, webhookSecret: `whsec_${name}` };
  const stripe = await startStripeCardProcessor(keys);
  const world = await makeEnv({ payments: stripe.payments, cardPayments: true });
  const env = envOf(world);
  stripe.fake.now = () => env.clock.now;
  return {
    fake: stripe.fake,
    world,
    ...keys,
    stripeEvent: (type, object, options = {}) => {
      const { payload, header } = signedStripeEvent(type, object, {
        secret: options.secret ?? keys.webhookSecret,
        now: env.clock.now,
        id: options.id,
        signedAt: options.signedAt,
      });
      return {
        payload,
        header,
        send: (headers = { "Stripe-Signature": header }) =>
          request(env.app, "POST", "/webhooks/card-processor", options.body ?? payload, {
            "Content-Type": "application/json; charset=utf-8",
            ...headers,
          }),
      };
    },
    openPayLink: (invoice) => request(env.app, "GET", `/public/invoices/${invoice.publicToken}/pay`),
  };
}

export interface CardPayments<World> {
  fake: FakeStripe;
  world: World;
  secretKey: string;
  webhookSecret: string;
  /** A Stripe event as Stripe would POST it, signed with the webhook secret (or `options.secret`). */
  stripeEvent(
    type: string,
    object: object,
    options?: { id?: string; secret?: string; signedAt?: Date; body?: string },
  ): { payload: string; header: string; send(headers?: Record<string, string>): ReturnType<typeof request> };
  /** The client's pay link: 303 to the processor's checkout, or back to the public page. */
  openPayLink(invoice: { publicToken: string }): ReturnType<typeof request>;
}
