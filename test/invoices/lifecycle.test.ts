import { beforeAll, describe, expect, it } from "vitest";
import { createTestEnvWithClient, expectProblem, type TestEnv, type TestUser } from "../support/env";
import { jobs } from "@invoicing/core/jobs/all";
import { WIDGET, widgetLine } from "../support/line-items";

let env: TestEnv;
let alice: TestUser;
let clientId: number;

beforeAll(async () => {
  ({ env, user: alice, clientId } = await createTestEnvWithClient({ paymentTermsDays: 14 }));
});

describe("invoice lifecycle", () => {
  it("computes the API.md example exactly and walks draft → finalized → sent → paid", async () => {
    const created = await alice.call("POST", "/invoices", { clientId, lineItems: [WIDGET] });
    expect(created.status).toBe(201);
    expect(created.headers.get("location")).toBe(`/invoices/${created.body.id}`);
    expect(created.headers.get("etag")).toBe('"1"');
    expect(created.body).toMatchObject({
      status: "draft",
      invoiceNumber: null,
      currency: "USD",
      subtotal: "59.97",
      taxTotal: "4.95",
      total: "64.92",
      amountPaid: "0.00",
      clientName: "Acme",
      clientEmail: "billing@acme.test",
      paymentMethod: null,
      lineItems: [widgetLine()],
    });
    expect(created.body.publicToken).toMatch(/^[A-Za-z0-9_-]{22,}$/);

    const id = created.body.id;
    const finalized = await alice.call("POST", `/invoices/${id}/finalize`);
    expect(finalized.status).toBe(200);
    expect(finalized.body).toMatchObject({
      status: "finalized",
      issueDate: "2026-11-22T09:30:00.000Z",
      dueDate: "2026-12-06T09:30:00.000Z",
    });
    expect(finalized.body.invoiceNumber).toMatch(/^INV-\d{6}$/);
    expectProblem(await alice.call("PATCH", `/invoices/${id}`, { notes: "x" }), 422, "invoice_not_editable");
    expectProblem(await alice.call("DELETE", `/invoices/${id}`), 422, "invoice_not_editable");
    expectProblem(await alice.call("POST", `/invoices/${id}/finalize`), 422, "invalid_transition");
    expectProblem(
      await alice.call("POST", `/invoices/${id}/mark-paid`, { paymentMethod: "cash" }),
      422,
      "invalid_transition",
    );

    const sent = await alice.call("POST", `/invoices/${id}/send`, {});
    expect(sent.body).toMatchObject({ status: "sent", sentAt: "2026-11-22T09:30:00.000Z" });

    expectProblem(
      await alice.call("POST", `/invoices/${id}/mark-paid`, { paymentMethod: "bitcoin" }),
      400,
      "validation_error",
    );
    expectProblem(
      await alice.call("POST", `/invoices/${id}/mark-paid`, { paymentMethod: "cash", paidAt: "2027-01-01" }),
      400,
      "validation_error",
    );
    const paid = await alice.call("POST", `/invoices/${id}/mark-paid`, { paymentMethod: "check", reference: "#1042" });
    expect(paid.body).toMatchObject({
      status: "paid",
      amountPaid: "64.92",
      paymentMethod: "check",
      paymentReference: "#1042",
      paidAt: "2026-11-22T09:30:00.000Z",
    });

    const voided = await alice.call("POST", `/invoices/${id}/void`);
    expect(voided.body.status).toBe("void");
    expect(voided.body.invoiceNumber).toBe(finalized.body.invoiceNumber);
    expectProblem(await alice.call("POST", `/invoices/${id}/void`), 422, "invalid_transition");
  });

  it("refuses to finalize an empty or negative invoice", async () => {
    const empty = await alice.call("POST", "/invoices", { clientId });
    expectProblem(await alice.call("POST", `/invoices/${empty.body.id}/finalize`), 422, "empty_invoice");
    const negative = await alice.call("POST", "/invoices", {
      clientId,
      lineItems: [{ description: "Refund", unitPrice: "-5.00" }],
    });
    expectProblem(await alice.call("POST", `/invoices/${negative.body.id}/finalize`), 422, "negative_total");
  });

  // 20 writers racing for one counter: ~200 rounds against DynamoDB Local, which a loaded machine
  // slows several times over (6 s alone, near 30 s beside a busy CPU). The outcome is the test.
  it("20 concurrent finalizes number INV-000001..20 without gap or duplicate", async () => {
    const bob = await env.user();
    const cid = (await bob.call("POST", "/clients", { name: "B" })).body.id;
    const ids: number[] = [];
    for (let i = 0; i < 20; i++)
      ids.push((await bob.call("POST", "/invoices", { clientId: cid, lineItems: [WIDGET] })).body.id);
    const results = await Promise.all(ids.map((id) => bob.call("POST", `/invoices/${id}/finalize`)));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    const numbers = results.map((r) => r.body.invoiceNumber).sort();
    expect(numbers).toEqual(Array.from({ length: 20 }, (_, i) => `INV-${String(i + 1).padStart(6, "0")}`));
  });

  it("20 concurrent mark-paid on one invoice: exactly one succeeds", async () => {
    const inv = await alice.call("POST", "/invoices", { clientId, lineItems: [WIDGET] });
    await alice.call("POST", `/invoices/${inv.body.id}/finalize`);
    await alice.call("POST", `/invoices/${inv.body.id}/send`);
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        alice.call("POST", `/invoices/${inv.body.id}/mark-paid`, { paymentMethod: "cash" }),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of results.filter((r) => r.status !== 200)) expectProblem(r, 422, "invalid_transition");
  });

  it("the overdue job flips only sent invoices past due, once", async () => {
    const inv = await alice.call("POST", "/invoices", { clientId, lineItems: [WIDGET], dueDate: "2026-11-25" });
    await alice.call("POST", `/invoices/${inv.body.id}/finalize`);
    await alice.call("POST", `/invoices/${inv.body.id}/send`);
    const before = await jobs.overdue!(env.deps, new Date("2026-11-25T00:00:00.000Z"));
    expect(before.changed).toBe(0);
    const after = await jobs.overdue!(env.deps, new Date("2026-11-25T00:00:00.001Z"));
    expect(after.changed).toBe(1);
    expect((await alice.call("GET", `/invoices/${inv.body.id}`)).body.status).toBe("overdue");
    const again = await jobs.overdue!(env.deps, new Date("2026-11-26T00:00:00.000Z"));
    expect(again.changed).toBe(0);
    const paid = await alice.call("POST", `/invoices/${inv.body.id}/mark-paid`, { paymentMethod: "bank_transfer" });
    expect(paid.body.status).toBe("paid");
  });
});
