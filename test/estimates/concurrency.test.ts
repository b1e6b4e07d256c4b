import { beforeAll, describe, expect, it } from "vitest";
import { createTestEnv, expectProblem, type TestEnv, type TestUser } from "../support/env";

/** Each estimate transition happens at most once, however many requests race for it. */

let env: TestEnv;

beforeAll(async () => {
  env = await createTestEnv();
});

const line = { description: "Consulting", quantity: "2", unitPrice: "150.00", taxRate: "0.2" };

async function userWithClient(): Promise<{ user: TestUser; clientId: number }> {
  const user = await env.user();
  const clientId = (await user.call("POST", "/clients", { name: "Initech", email: "ap@initech.test" })).body.id;
  return { user, clientId };
}

describe("concurrent estimate requests", () => {
  it("10 concurrent converts create exactly one invoice; the others get already_converted", async () => {
    const { user, clientId } = await userWithClient();
    const est = (await user.call("POST", "/estimates", { clientId, lineItems: [line, line] })).body;
    await user.call("POST", `/estimates/${est.id}/send`);
    await user.call("POST", `/estimates/${est.id}/accept`);

    const results = await Promise.all(
      Array.from({ length: 10 }, () => user.call("POST", `/estimates/${est.id}/convert`)),
    );
    const created = results.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    for (const r of results.filter((r) => r.status !== 201)) expectProblem(r, 422, "already_converted");

    const invoices = (await user.call("GET", "/invoices?limit=200")).body as {
      id: number;
      estimateId: number | null;
    }[];
    expect(invoices).toHaveLength(1);
    expect(invoices[0]).toMatchObject({ id: created[0]!.body.id, estimateId: est.id, total: "720.00" });
    const after = (await user.call("GET", `/estimates/${est.id}`)).body;
    expect(after).toMatchObject({ status: "converted", convertedInvoiceId: created[0]!.body.id });
    // The client is referenced by the estimate and by exactly one invoice: deleting that invoice
    // leaves the estimate's reference, deleting nothing else frees the client.
    expect((await user.call("DELETE", `/invoices/${created[0]!.body.id}`)).status).toBe(204);
    expectProblem(await user.call("DELETE", `/clients/${clientId}`), 422, "client_in_use");
  });

  it("10 concurrent converts of a draft: still exactly one invoice", async () => {
    const { user, clientId } = await userWithClient();
    const est = (await user.call("POST", "/estimates", { clientId, lineItems: [line] })).body;
    const results = await Promise.all(
      Array.from({ length: 10 }, () => user.call("POST", `/estimates/${est.id}/convert`)),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of results.filter((r) => r.status !== 201)) expectProblem(r, 422, "already_converted");
    expect((await user.call("GET", `/invoices?clientId=${clientId}`)).body).toHaveLength(1);
  });

  it("10 concurrent accepts: exactly one 200, the rest invalid_transition", async () => {
    const { user, clientId } = await userWithClient();
    const est = (await user.call("POST", "/estimates", { clientId, lineItems: [line] })).body;
    await user.call("POST", `/estimates/${est.id}/send`);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => user.call("POST", `/estimates/${est.id}/accept`)),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of results.filter((r) => r.status !== 200)) expectProblem(r, 422, "invalid_transition");
    const after = await user.call("GET", `/estimates/${est.id}`);
    expect(after.body.status).toBe("accepted");
    expect(after.headers.get("etag")).toBe('"3"');
  });

  it("accept and decline racing: exactly one answer wins", async () => {
    const { user, clientId } = await userWithClient();
    const est = (await user.call("POST", "/estimates", { clientId })).body;
    await user.call("POST", `/estimates/${est.id}/send`);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => user.call("POST", `/estimates/${est.id}/${i % 2 ? "decline" : "accept"}`)),
    );
    const winners = results.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    for (const r of results.filter((r) => r.status !== 200)) expectProblem(r, 422, "invalid_transition");
    expect((await user.call("GET", `/estimates/${est.id}`)).body.status).toBe(winners[0]!.body.status);
  });

  it("concurrent sends: one 200, the rest invalid_transition", async () => {
    const { user, clientId } = await userWithClient();
    const est = (await user.call("POST", "/estimates", { clientId })).body;
    const results = await Promise.all(Array.from({ length: 6 }, () => user.call("POST", `/estimates/${est.id}/send`)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of results.filter((r) => r.status !== 200)) expectProblem(r, 422, "invalid_transition");
  });

  it("12 concurrent creates number EST-000001..12 without gap or duplicate", async () => {
    const { user, clientId } = await userWithClient();
    const results = await Promise.all(Array.from({ length: 12 }, () => user.call("POST", "/estimates", { clientId })));
    expect(results.map((r) => r.status)).toEqual(Array(12).fill(201));
    const numbers = results.map((r) => r.body.estimateNumber).sort();
    expect(numbers).toEqual(Array.from({ length: 12 }, (_, i) => `EST-${String(i + 1).padStart(6, "0")}`));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(12);
  });

  it("a PATCH racing a convert never leaves the invoice with other lines than the converted estimate", async () => {
    const { user, clientId } = await userWithClient();
    const est = (await user.call("POST", "/estimates", { clientId, lineItems: [line] })).body;
    const cheap = { description: "Cheap", unitPrice: "1.00" };
    const [patch, convert] = await Promise.all([
      user.call("PATCH", `/estimates/${est.id}`, { lineItems: [cheap] }),
      user.call("POST", `/estimates/${est.id}/convert`),
    ]);
    expect(convert.status).toBe(201);
    const final = (await user.call("GET", `/estimates/${est.id}`)).body;
    expect(final.status).toBe("converted");
    if (patch.status === 200) {
      // The edit landed first; the invoice must carry it.
      expect(convert.body.total).toBe("1.00");
    } else {
      expectProblem(patch, 422, "estimate_not_editable");
      expect(convert.body.total).toBe("360.00");
    }
    expect(final.lineItems.map((l: { description: string }) => l.description)).toEqual(
      convert.body.lineItems.map((l: { description: string }) => l.description),
    );
  });
});
