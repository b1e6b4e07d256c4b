import { createDb } from "@invoicing/core/db/dynamodb";
import { createApp } from "@invoicing/functions/app/create-app";
import { publicPaths } from "@invoicing/functions/http/middleware";
import { expect } from "vitest";
import type { TestUser } from "../support/env";
import { WIDGET as line } from "../support/line-items";

/**
 * The endpoints, read from the app itself (app.routes), so an endpoint added later is fuzzed and
 * checked for tenancy without touching these tests. What the app cannot say — a valid body for
 * each write — comes from VALID_BODIES; an endpoint missing there is still covered (with no body),
 * and the tenancy test says when it needs an entry.
 */
export interface Endpoint {
  method: string;
  path: string;
  /** The path's first parameter (`id`, `token`), if any. A second one (`paymentId`) is filled with 1. */
  param?: string;
  /** Whether it needs an API key. */
  authenticated: boolean;
}

export function endpoints(): Endpoint[] {
  // The routes do not depend on the deps: an app over an unreachable table lists them all.
  const app = createApp({
    db: createDb({ tableName: "unused", dynamoEndpoint: "http://127.0.0.1:9", region: "local" }),
    clock: () => new Date(),
  });
  const isPublic = publicPaths(app.routes);
  const seen = new Set<string>();
  const out: Endpoint[] = [];
  for (const route of app.routes) {
    // ALL: middleware and the 405 catch-alls, not endpoints.
    if (route.method === "ALL" || seen.has(`${route.method} ${route.path}`)) continue;
    seen.add(`${route.method} ${route.path}`);
    const params = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
    expect(params.length, `${route.path}: two parameters at most are supported here`).toBeLessThanOrEqual(2);
    out.push({
      method: route.method,
      path: route.path,
      param: params[0],
      authenticated: !isPublic(route.path.replace(/:\w+/g, "x")),
    });
  }
  return out;
}

export const endpointName = (e: Endpoint) => `${e.method} ${e.path}`;

/** Fills the path parameter. */
export const pathOf = (e: Endpoint, value: string): string =>
  // A second parameter names a record under the first (a payment of an invoice): every user's
  // fixture invoice has its first payment, id 1, so the first parameter alone decides whose it is.
  (e.param ? e.path.replace(`:${e.param}`, value) : e.path).replace(/:\w+/g, "1");

/** The records a user owns for the tests (ids per kind, public tokens). */
export interface Fixtures {
  clientId: number;
  /** A client with email, no documents (deletable). */
  spareClientId: number;
  invoiceId: number;
  estimateId: number;
  scheduleId: number;
  apiKeyId: number;
  webhookEndpointId: number;
  creditNoteId: number;
  invoiceToken: string;
  estimateToken: string;
  creditNoteToken: string;
  /** An email of the user's outbox (the invoice email of the fixture's send): ids are strings. */
  emailId: string;
}

/** A body each write endpoint accepts (given the fixtures it acts on). Absent: no body. */
export const VALID_BODIES: Record<string, (f: Fixtures) => unknown> = {
  "POST /api-keys": () => ({ name: "another" }),
  "POST /clients": () => ({ name: "New client", email: "new@client.test" }),
  "PATCH /clients/:id": () => ({ name: "Renamed" }),
  "POST /invoices": (f) => ({ clientId: f.clientId, lineItems: [line] }),
  "PATCH /invoices/:id": () => ({ notes: "changed" }),
  "POST /invoices/:id/send": () => ({ to: "someone@else.test" }),
  "POST /invoices/:id/mark-paid": () => ({ paymentMethod: "cash" }),
  "POST /invoices/:id/payments": () => ({ amount: "1.00", paymentMethod: "cash" }),
  "POST /invoices/:id/credit-notes": () => ({ lineItems: [{ description: "Goodwill", unitPrice: "0.01" }] }),
  "POST /credit-notes/:id/send": () => ({ to: "someone@else.test" }),
  "POST /estimates": (f) => ({ clientId: f.clientId, lineItems: [line] }),
  "PATCH /estimates/:id": () => ({ notes: "changed" }),
  "POST /estimates/:id/send": () => ({ to: "someone@else.test" }),
  "POST /recurring-schedules": (f) => ({
    clientId: f.clientId,
    frequency: "monthly",
    startDate: "2027-01-01",
    lineItems: [line],
  }),
  "PATCH /recurring-schedules/:id": () => ({ notes: "changed" }),
  "POST /webhook-endpoints": () => ({ url: "https://93.184.215.14/hooks", events: ["*"] }),
  "PATCH /webhook-endpoints/:id": () => ({ description: "changed" }),
  "POST /webhooks/card-processor": () => ({ id: "evt_1", type: "checkout.session.completed", data: { object: {} } }),
};

/** The value of an endpoint's parameter that names the fixture of its kind. */
export function fixtureParam(e: Endpoint, f: Fixtures): string {
  if (e.param === "token") {
    if (e.path.startsWith("/public/estimates")) return f.estimateToken;
    return e.path.startsWith("/public/credit-notes") ? f.creditNoteToken : f.invoiceToken;
  }
  const kind = e.path.split("/")[1];
  if (kind === "email-deliveries") return f.emailId;
  const ids: Record<string, number> = {
    clients: f.spareClientId,
    invoices: f.invoiceId,
    estimates: f.estimateId,
    "recurring-schedules": f.scheduleId,
    "api-keys": f.apiKeyId,
    "webhook-endpoints": f.webhookEndpointId,
    "credit-notes": f.creditNoteId,
  };
  const id = kind ? ids[kind] : undefined;
  if (id === undefined) throw new Error(`no fixture for ${endpointName(e)}: add its kind to fixtureParam`);
  return String(id);
}

/**
 * Records of every kind for `user`, `copies` of each so that the last ones' ids exceed another
 * user's: a client with documents, a spare client, a draft and a sent invoice (with a credit note of
 * one unit), a sent estimate, a schedule, api keys. Returns the last of each.
 */
export async function makeFixtures(user: TestUser, copies = 1, label = "Fixture"): Promise<Fixtures> {
  const ok = async (method: string, path: string, body?: unknown) => {
    const res = await user.call(method, path, body);
    expect(res.status, `${method} ${path}: ${res.text.slice(0, 200)}`).toBeLessThan(300);
    return res.body;
  };
  let f: Fixtures | undefined;
  for (let i = 0; i < copies; i++) {
    const client = await ok("POST", "/clients", {
      name: `${label} client`,
      email: `${label.toLowerCase()}@client.test`,
    });
    const spare = await ok("POST", "/clients", { name: `${label} spare` });
    await ok("POST", "/invoices", { clientId: client.id, lineItems: [line], notes: `${label} draft` });
    const invoice = await ok("POST", "/invoices", {
      clientId: client.id,
      lineItems: [line],
      notes: `${label} invoice`,
    });
    await ok("POST", `/invoices/${invoice.id}/finalize`);
    await ok("POST", `/invoices/${invoice.id}/send`);
    // The user's only payment (id 1), on the last fixture invoice: see pathOf.
    if (i === copies - 1)
      await ok("POST", `/invoices/${invoice.id}/payments`, { amount: "1.00", paymentMethod: "cash" });
    const creditNote = await ok("POST", `/invoices/${invoice.id}/credit-notes`, {
      lineItems: [{ invoiceLineId: 1, quantity: "1" }],
      memo: `${label} credit note`,
    });
    const estimate = await ok("POST", "/estimates", {
      clientId: client.id,
      lineItems: [line],
      notes: `${label} estimate`,
    });
    await ok("POST", `/estimates/${estimate.id}/send`);
    const schedule = await ok("POST", "/recurring-schedules", {
      clientId: client.id,
      frequency: "monthly",
      startDate: "2027-01-01",
      lineItems: [line],
      notes: `${label} schedule`,
    });
    const key = await ok("POST", "/api-keys", { name: `${label} key` });
    // A public address: the URL guard refuses private ones under the tests' default policy.
    const endpoint = await ok("POST", "/webhook-endpoints", {
      url: "https://93.184.215.14/hooks",
      events: ["*"],
      description: label,
    });
    const [email] = await ok("GET", "/email-deliveries");
    f = {
      emailId: email.id,
      clientId: client.id,
      spareClientId: spare.id,
      invoiceId: invoice.id,
      estimateId: estimate.id,
      scheduleId: schedule.id,
      apiKeyId: key.id,
      webhookEndpointId: endpoint.id,
      creditNoteId: creditNote.id,
      invoiceToken: invoice.publicToken,
      estimateToken: estimate.publicToken,
      creditNoteToken: creditNote.publicToken,
    };
  }
  return f!;
}
