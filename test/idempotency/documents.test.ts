import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { LEASE_MS } from "@invoicing/core/idempotency/records";
import { createTestEnv, expectProblem, type TestEnv, type TestUser } from "../support/env";
import { gate, responseStore, type Gate } from "./faults";

/** The same middleware on the document routes: creates, lifecycle actions, and a create of another kind. */
let env: TestEnv;
let user: TestUser;
let clientId: number;
const gates: Gate[] = [];

beforeAll(async () => {
  env = await createTestEnv();
  user = await env.user();
  clientId = (await user.call("POST", "/clients", { name: "Buyer", email: "ap@buyer.test" })).body.id;
});

afterEach(() => {
  for (const g of gates.splice(0)) {
    g.release();
    g.remove();
  }
});

let counter = 0;
const freshKey = () => ({ "Idempotency-Key": `doc-${++counter}-${Math.random().toString(36).slice(2)}` });
const line = { description: "Work", quantity: "2", unitPrice: "50.00" };

async function draftInvoice(): Promise<number> {
  const res = await user.call("POST", "/invoices", { clientId, lineItems: [line] });
  expect(res.status).toBe(201);
  return res.body.id;
}

describe("Idempotency-Key on documents", () => {
  it("a repeated create returns the same invoice, and only one exists", async () => {
    const k = freshKey();
    const body = { clientId, notes: "retry me", lineItems: [line] };
    const first = await user.call("POST", "/invoices", body, k);
    expect(first.status).toBe(201);
    const again = await user.call("POST", "/invoices", body, k);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("location")).toBe(`/invoices/${first.body.id}`);
    const list = await user.call("GET", "/invoices");
    expect(
      list.body.filter((i: { notes: string | null }) => i.notes === "retry me").map((i: { id: number }) => i.id),
    ).toEqual([first.body.id]);
  });

  it("a retried action replays its 200 instead of failing as a second transition", async () => {
    const id = await draftInvoice();
    const k = freshKey();
    const finalized = await user.call("POST", `/invoices/${id}/finalize`, undefined, k);
    expect(finalized.status).toBe(200);
    expect(finalized.body.invoiceNumber).toMatch(/^INV-\d{6}$/);
    const again = await user.call("POST", `/invoices/${id}/finalize`, undefined, k);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(finalized.body);
    // Without the key it is a second finalize, refused.
    expectProblem(await user.call("POST", `/invoices/${id}/finalize`), 422, "invalid_transition");
    // One number taken: the next finalize gets the one after it.
    const next = await user.call("POST", `/invoices/${await draftInvoice()}/finalize`);
    expect(Number(next.body.invoiceNumber.slice(4))).toBe(Number(finalized.body.invoiceNumber.slice(4)) + 1);
  });

  it("the key is bound to its path: another id is 422 reused, an unknown id 404 first", async () => {
    const [a, b] = [await draftInvoice(), await draftInvoice()];
    const k = freshKey();
    expect((await user.call("POST", `/invoices/${a}/void`, {}, k)).status).toBe(200);
    expectProblem(await user.call("POST", `/invoices/${b}/void`, {}, k), 422, "idempotency_key_reused");
    expectProblem(await user.call("POST", "/invoices/999999/void", {}, k), 404, "not_found");
    expect((await user.call("GET", `/invoices/${b}`)).body.status).toBe("draft");
    // An empty action body and {} are the same request.
    expect((await user.call("POST", `/invoices/${a}/void`, undefined, k)).headers.get("idempotent-replayed")).toBe(
      "true",
    );
  });

  it("a convert whose response was lost is answered with its new invoice: 201 and its Location", async () => {
    const estimate = await user.call("POST", "/estimates", { clientId, lineItems: [line] });
    expect(estimate.status).toBe(201);
    const k = freshKey();
    const crash = gate(env.deps.db, responseStore);
    gates.push(crash);
    const doomed = user.call("POST", `/estimates/${estimate.body.id}/convert`, undefined, k);
    await Promise.race([
      crash.reached,
      doomed.then((r) => Promise.reject(new Error(`finished with ${r.status} before the gate`))),
    ]);

    env.clock.advance(LEASE_MS + 1);
    const retry = await user.call("POST", `/estimates/${estimate.body.id}/convert`, undefined, k);
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body.estimateId).toBe(estimate.body.id);
    expect(retry.headers.get("location")).toBe(`/invoices/${retry.body.id}`);
    const converted = await user.call("GET", `/estimates/${estimate.body.id}`);
    expect(converted.body).toMatchObject({ status: "converted", convertedInvoiceId: retry.body.id });
    const fromEstimate = (await user.call("GET", "/invoices")).body.filter(
      (i: { estimateId: number | null }) => i.estimateId === estimate.body.id,
    );
    expect(fromEstimate).toHaveLength(1);

    crash.release();
    expect((await doomed).body).toEqual(retry.body);
  });
});
