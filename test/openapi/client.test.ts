import { beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { createClient, type ApiClient, type Invoice } from "@invoicing/functions/api-client";
import { createTestEnv, type TestEnv, type TestUser } from "../support/env";

/**
 * The typed client (packages/functions/src/api-client.ts, hono's `hc`) against the real app: its fetch
 * is `app.request`, so each call is a real Request through every middleware.
 */
let env: TestEnv;
let alice: TestUser;
let api: ApiClient;

beforeAll(async () => {
  env = await createTestEnv();
  alice = await env.user();
  api = createClient("http://localhost", alice.key, { fetch: env.app.request });
});

describe("createClient", () => {
  it("creates, reads, lists and updates through typed calls, with the API key", async () => {
    const created = await api.clients.$post({
      json: { name: "Acme", email: "billing@acme.test", paymentTermsDays: 14 },
    });
    expect(created.status).toBe(201);
    const client = await created.json();
    expect(client).toMatchObject({ name: "Acme", email: "billing@acme.test", paymentTermsDays: 14, currency: "USD" });
    expectTypeOf(client.paymentTermsDays).toEqualTypeOf<number>();
    expect(created.headers.get("location")).toBe(`/clients/${client.id}`);

    const got = await api.clients[":id"].$get({ param: { id: String(client.id) } });
    expect(got.status).toBe(200);
    expect((await got.json()).name).toBe("Acme");

    const invoice = await api.invoices.$post({
      json: {
        clientId: client.id,
        lineItems: [{ description: "Widget", quantity: "3", unitPrice: 19.99, taxRate: "0.0825" }],
      },
    });
    expect(invoice.status).toBe(201);
    const draft = (await invoice.json()) as Invoice;
    expectTypeOf(draft.lineItems[0]!.amount).toEqualTypeOf<string>();
    expect(draft).toMatchObject({ status: "draft", total: "64.92" });

    const finalized = await api.invoices[":id"].finalize.$post(
      { param: { id: String(draft.id) } },
      { headers: { "Idempotency-Key": "fin-1" } },
    );
    expect(finalized.status).toBe(200);
    const again = await api.invoices[":id"].finalize.$post(
      { param: { id: String(draft.id) } },
      { headers: { "Idempotency-Key": "fin-1" } },
    );
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");

    const page = await api.invoices.$get({ query: { status: "finalized", limit: "10" } });
    expect(page.status).toBe(200);
    expect(((await page.json()) as Invoice[]).map((i) => i.id)).toEqual([draft.id]);

    const keys = await api["api-keys"].$get();
    expect((await keys.json()).map((k) => k.name)).toContain("test");
  });

  it("sends the key it was given: a wrong one is a 401 problem", async () => {
    const stranger = createClient("http://localhost", "inv_not_a_real_key", { fetch: env.app.request });
    const res = await stranger.clients.$get({ query: {} });
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  });

  it("is typed from the routes and the documented request schemas: wrong calls do not compile", async () => {
    // Each @ts-expect-error fails `tsc` if its line stops being an error: these are compile-time assertions.
    const bodies = async () => {
      // @ts-expect-error -- no such route
      await api.nonexistent.$get();
      // @ts-expect-error -- clientId is required by createInvoiceBody
      await api.invoices.$post({ json: { notes: "x" } });
      // @ts-expect-error -- request bodies are strict: no unknown field
      await api.clients.$post({ json: { name: "a", nope: 1 } });
      // @ts-expect-error -- status is one of the invoice statuses
      await api.invoices.$get({ query: { status: "bogus" } });
      // @ts-expect-error -- the path param is required
      await api.invoices[":id"].finalize.$post({});
    };
    expect(bodies).toBeTypeOf("function");
    expectTypeOf(api.health.$get).toBeFunction();
    expectTypeOf(api["recurring-schedules"][":id"].pause.$post).toBeFunction();

    // Optional action bodies and typed bodies, at runtime too.
    const client = await (await api.clients.$post({ json: { name: "Typed", email: "typed@acme.test" } })).json();
    const draft = (await (
      await api.invoices.$post({ json: { clientId: client.id, lineItems: [{ description: "x", unitPrice: 5 }] } })
    ).json()) as Invoice;
    await api.invoices[":id"].finalize.$post({ param: { id: String(draft.id) } });
    const sent = await api.invoices[":id"].send.$post({
      param: { id: String(draft.id) },
      json: { to: "ap@acme.test" },
    });
    expect(sent.status).toBe(200);
    expect(((await sent.json()) as Invoice).status).toBe("sent");
  });
});
