import { randomBytes } from "node:crypto";
import Stripe from "stripe";
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { CardProcessor } from "@invoicing/core/capabilities/card-processor";
import { createStripeCardProcessor } from "@invoicing/core/payments/stripe";

/**
 * A stand-in for the part of Stripe's API the service calls (there is no internet here): a real
 * HTTP server on 127.0.0.1 that the real `stripe` SDK is pointed at (its host/port/protocol
 * options). It answers like Stripe's API does — form-encoded requests, JSON objects shaped like
 * Stripe's, Stripe's error envelope, Idempotency-Key replays — and records every request, so tests
 * assert what the SDK actually sent.
 *
 * POST /v1/checkout/sessions, GET /v1/checkout/sessions/:id, POST /v1/checkout/sessions/:id/expire,
 * POST /v1/refunds, GET /v1/refunds/:id. Idempotency-Key as Stripe keeps it: the same key replays the
 * first answer; the same key with other parameters is a 400 idempotency_error.
 */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The form body decoded into nested objects and arrays, as Stripe reads it. */
  body: Record<string, unknown>;
}

export interface FakeSession {
  id: string;
  object: "checkout.session";
  url: string;
  created: number;
  expires_at: number;
  amount_total: number;
  amount_subtotal: number;
  currency: string;
  metadata: Record<string, string>;
  client_reference_id: string | null;
  customer_email: string | null;
  mode: string;
  payment_intent: string | null;
  payment_status: "unpaid" | "paid";
  status: "open" | "complete" | "expired";
  success_url: string | null;
  cancel_url: string | null;
  livemode: false;
}

/** What completing a session charged: the money a refund gives back (Stripe's PaymentIntent + Charge). */
export interface FakePaymentIntent {
  id: string;
  charge: string;
  amount: number;
  amount_refunded: number;
  currency: string;
}

export interface FakeRefund {
  id: string;
  object: "refund";
  amount: number;
  balance_transaction: string;
  charge: string;
  created: number;
  currency: string;
  metadata: Record<string, string>;
  payment_intent: string;
  reason: string | null;
  receipt_number: null;
  source_transfer_reversal: null;
  status: "succeeded";
  transfer_reversal: null;
}

export interface FakeStripe {
  /** e.g. http://127.0.0.1:40123 — what STRIPE_API_BASE would be. */
  url: string;
  requests: RecordedRequest[];
  sessions: Map<string, FakeSession>;
  paymentIntents: Map<string, FakePaymentIntent>;
  refunds: Map<string, FakeRefund>;
  /** The server's notion of now (sessions' created/expires_at, and expiry on retrieve). */
  now: () => Date;
  /** Answer the next `count` requests with a Stripe API error of this HTTP status. */
  failNext(status: number, count?: number): void;
  /**
   * Apply the next `count` matching requests, then cut the connection before answering: the "did it
   * happen?" case a client resolves by retrying with the same Idempotency-Key.
   */
  dropResponseAfterApplying(match: (method: string, path: string) => boolean, count?: number): void;
  /** What Stripe does when the customer pays: the session becomes complete and paid. */
  completeSession(id: string): FakeSession;
  close(): Promise<void>;
}

const SESSION_LIFETIME_SECONDS = 24 * 3600;

/**
 * Stripe's hosted checkout page of a session (the session's `url`, opened by the customer's browser,
 * no API key): here a plain page stating what would be charged, for the browser test of the pay link.
 */
function checkoutPage(res: ServerResponse, session: FakeSession | undefined): void {
  if (!session) {
    res.writeHead(404, { "Content-Type": "text/plain" }).end("no such checkout session");
    return;
  }
  const amount = `${session.currency.toUpperCase()} ${session.amount_total}`;
  res
    .writeHead(200, { "Content-Type": "text/html; charset=utf-8" })
    .end(
      `<!doctype html><title>Checkout</title><h1>Pay</h1><p data-testid="session">${session.id}</p>` +
        `<p data-testid="amount">${amount}</p><p data-testid="status">${session.status}</p>`,
    );
}

/**
 * A fake Stripe and the service's own card processor (core's Stripe adapter: the real SDK inside)
 * pointed at it with these keys — the `payments` a card-payment test gives its env. The fake keeps
 * the wall clock until the test ties it to its env's (`fake.now = () => env.clock.now`).
 */
export async function startStripeCardProcessor(keys: {
  secretKey: string;
  webhookSecret: string;
}): Promise<{ fake: FakeStripe; payments: CardProcessor }> {
  const fake = await startFakeStripe();
  return { fake, payments: createStripeCardProcessor({ ...keys, apiBase: fake.url }) };
}

export async function startFakeStripe(options: { now?: () => Date } = {}): Promise<FakeStripe> {
  const requests: RecordedRequest[] = [];
  const sessions = new Map<string, FakeSession>();
  const paymentIntents = new Map<string, FakePaymentIntent>();
  const refunds = new Map<string, FakeRefund>();
  const idempotent = new Map<string, { request: string; status: number; body: unknown }>();
  let failures: { status: number; count: number } | undefined;
  let drops: { match: (method: string, path: string) => boolean; count: number } | undefined;

  const fake: FakeStripe = {
    url: "",
    requests,
    sessions,
    paymentIntents,
    refunds,
    now: options.now ?? (() => new Date()),
    failNext(status, count = 1) {
      failures = { status, count };
    },
    dropResponseAfterApplying(match, count = 1) {
      drops = { match, count };
    },
    completeSession(id) {
      const session = sessions.get(id);
      if (!session) throw new Error(`no session ${id}`);
      const intent: FakePaymentIntent = {
        id: `pi_test_${randomId()}`,
        charge: `ch_test_${randomId()}`,
        amount: session.amount_total,
        amount_refunded: 0,
        currency: session.currency,
      };
      paymentIntents.set(intent.id, intent);
      Object.assign(session, { status: "complete", payment_status: "paid", payment_intent: intent.id });
      return session;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const path = (req.url ?? "/").split("?")[0]!;
      const body = decodeForm(Buffer.concat(chunks).toString("utf8"));
      requests.push({ method: req.method ?? "GET", path, headers: req.headers, body });
      const reply = (status: number, payload: unknown) => {
        res.writeHead(status, { "Content-Type": "application/json", "Request-Id": `req_${randomId()}` });
        res.end(JSON.stringify(payload));
      };

      const hosted = /^\/c\/pay\/(cs_test_\w+)$/.exec(path);
      if (req.method === "GET" && hosted) return checkoutPage(res, sessions.get(hosted[1]!));
      if (!/^Bearer sk_test_\w+$/.test(req.headers.authorization ?? "")) {
        return reply(401, stripeError("invalid_request_error", "Invalid API Key provided"));
      }
      if (failures && failures.count > 0) {
        failures.count--;
        return reply(failures.status, stripeError("api_error", "Something went wrong on Stripe's end."));
      }
      const key = req.headers["idempotency-key"];
      const fingerprint = `${req.method} ${path} ${JSON.stringify(body)}`;
      if (req.method === "POST" && typeof key === "string" && idempotent.has(key)) {
        const kept = idempotent.get(key)!;
        if (kept.request !== fingerprint) {
          return reply(
            400,
            stripeError(
              "idempotency_error",
              "Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '" +
                key +
                "' if you meant to execute a different request.",
            ),
          );
        }
        res.setHeader("Idempotent-Replayed", "true");
        return reply(kept.status, kept.body);
      }

      let status = 404;
      let payload: unknown = stripeError("invalid_request_error", `Unrecognized request URL (${req.method}: ${path})`);
      const expire = /^\/v1\/checkout\/sessions\/([^/]+)\/expire$/.exec(path);
      if (req.method === "POST" && path === "/v1/checkout/sessions") {
        [status, payload] = createSession(body);
      } else if (req.method === "POST" && expire) {
        [status, payload] = expireSession(decodeURIComponent(expire[1]!));
      } else if (req.method === "POST" && path === "/v1/refunds") {
        [status, payload] = createRefund(body);
      } else if (req.method === "GET" && path.startsWith("/v1/refunds/")) {
        const refund = refunds.get(decodeURIComponent(path.slice("/v1/refunds/".length)));
        [status, payload] = refund
          ? [200, refund]
          : [404, stripeError("invalid_request_error", "No such refund", "resource_missing")];
      } else if (req.method === "GET" && path.startsWith("/v1/checkout/sessions/")) {
        const session = sessions.get(decodeURIComponent(path.slice("/v1/checkout/sessions/".length)));
        if (session) {
          if (session.status === "open" && session.expires_at <= seconds(fake.now())) session.status = "expired";
          [status, payload] = [200, session];
        } else {
          payload = stripeError("invalid_request_error", "No such checkout.session", "resource_missing");
        }
      }
      // Stripe keeps the answer of a key unless the request failed on its side (5xx) or was invalid
      // before it ran; errors of the request itself (400) are kept too, as Stripe does.
      if (req.method === "POST" && typeof key === "string")
        idempotent.set(key, { request: fingerprint, status, body: payload });
      if (drops && drops.count > 0 && drops.match(req.method ?? "GET", path)) {
        drops.count--;
        req.socket.destroy(); // applied, but the client never hears so
        return;
      }
      reply(status, payload);
    });
  });

  function createSession(body: Record<string, unknown>): [number, unknown] {
    const line = (body.line_items as Record<string, unknown>[] | undefined)?.[0];
    const price = line?.price_data as Record<string, unknown> | undefined;
    const amount = Number(price?.unit_amount);
    if (
      body.mode !== "payment" ||
      !price ||
      !Number.isSafeInteger(amount) ||
      amount < 0 ||
      typeof price.currency !== "string"
    ) {
      return [400, stripeError("invalid_request_error", "Missing required param: line_items[0][price_data].")];
    }
    const quantity = Number(line?.quantity ?? 1);
    const created = seconds(fake.now());
    const id = `cs_test_${randomId()}`;
    const session: FakeSession = {
      id,
      object: "checkout.session",
      // Hosted checkout, served by this stand-in (see checkoutPage) so a browser can follow a pay link.
      url: `${fake.url}/c/pay/${id}`,
      created,
      expires_at: created + SESSION_LIFETIME_SECONDS,
      amount_total: amount * quantity,
      amount_subtotal: amount * quantity,
      currency: price.currency,
      metadata: (body.metadata as Record<string, string> | undefined) ?? {},
      client_reference_id: (body.client_reference_id as string | undefined) ?? null,
      customer_email: (body.customer_email as string | undefined) ?? null,
      mode: "payment",
      payment_intent: null,
      payment_status: "unpaid",
      status: "open",
      success_url: (body.success_url as string | undefined) ?? null,
      cancel_url: (body.cancel_url as string | undefined) ?? null,
      livemode: false,
    };
    sessions.set(id, session);
    return [200, session];
  }

  function expireSession(id: string): [number, unknown] {
    const session = sessions.get(id);
    if (!session)
      return [404, stripeError("invalid_request_error", `No such checkout.session: '${id}'`, "resource_missing")];
    if (session.status === "open" && session.expires_at <= seconds(fake.now())) session.status = "expired";
    if (session.status !== "open") {
      return [
        400,
        stripeError("invalid_request_error", 'Only Checkout Sessions with a status in ["open"] can be expired.'),
      ];
    }
    session.status = "expired";
    return [200, session];
  }

  /** Stripe's refund rules: a known, charged PaymentIntent; at most what is left unrefunded. */
  function createRefund(body: Record<string, unknown>): [number, unknown] {
    const intent = typeof body.payment_intent === "string" ? paymentIntents.get(body.payment_intent) : undefined;
    if (!intent) {
      return [
        400,
        {
          error: {
            type: "invalid_request_error",
            message: `No such payment_intent: '${String(body.payment_intent)}'`,
            code: "resource_missing",
            param: "payment_intent",
          },
        },
      ];
    }
    const left = intent.amount - intent.amount_refunded;
    const amount = body.amount === undefined ? left : Number(body.amount);
    if (!Number.isSafeInteger(amount) || amount <= 0 || String(amount) !== String(body.amount ?? left)) {
      return [400, { error: { type: "invalid_request_error", message: "Invalid positive integer", param: "amount" } }];
    }
    if (left === 0) {
      return [
        400,
        {
          error: {
            type: "invalid_request_error",
            message: `Charge ${intent.charge} has already been refunded.`,
            code: "charge_already_refunded",
          },
        },
      ];
    }
    if (amount > left) {
      return [
        400,
        {
          error: {
            type: "invalid_request_error",
            message: `Refund amount (${amount}) is greater than unrefunded amount on charge (${left})`,
            param: "amount",
          },
        },
      ];
    }
    intent.amount_refunded += amount;
    const refund: FakeRefund = {
      id: `re_test_${randomId()}`,
      object: "refund",
      amount,
      balance_transaction: `txn_test_${randomId()}`,
      charge: intent.charge,
      created: seconds(fake.now()),
      currency: intent.currency,
      metadata: (body.metadata as Record<string, string> | undefined) ?? {},
      payment_intent: intent.id,
      reason: (body.reason as string | undefined) ?? null,
      receipt_number: null,
      source_transfer_reversal: null,
      status: "succeeded",
      transfer_reversal: null,
    };
    refunds.set(refund.id, refund);
    return [200, refund];
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);
const randomId = () => randomBytes(12).toString("hex");

function stripeError(type: string, message: string, code?: string) {
  return { error: { type, message, ...(code ? { code } : {}) } };
}

/**
 * Stripe's form encoding: `a[b][0][c]=x` is { a: { b: [ { c: "x" } ] } }. Numeric segments make
 * arrays, like Stripe's own decoder.
 */
export function decodeForm(text: string): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    const path = name.split(/\[|\]\[|\]/).filter((part) => part !== "");
    let node: Record<string, unknown> | unknown[] = root;
    path.forEach((part, i) => {
      const last = i === path.length - 1;
      const container = node as Record<string, unknown>;
      if (last) {
        container[part] = value;
        return;
      }
      container[part] ??= /^\d+$/.test(path[i + 1]!) ? [] : {};
      node = container[part] as Record<string, unknown>;
    });
  }
  return root;
}

let eventCounter = 0;

/**
 * A Stripe event as Stripe POSTs it to a webhook: the JSON body and its Stripe-Signature header,
 * signed with the SDK's own test helper (so verification in the app is real).
 */
export function signedStripeEvent(
  type: string,
  object: object,
  options: { secret: string; now: Date; id?: string; signedAt?: Date },
): { payload: string; header: string } {
  const seconds = (date: Date) => Math.floor(date.getTime() / 1000);
  const payload = JSON.stringify({
    id: options.id ?? `evt_test_${++eventCounter}`,
    object: "event",
    api_version: "2026-10-28.endive",
    created: seconds(options.now) - 30,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object },
  });
  const header = Stripe.webhooks.generateTestHeaderString({
    payload,
    secret: options.secret,
    timestamp: seconds(options.signedAt ?? options.now),
  });
  return { payload, header };
}
