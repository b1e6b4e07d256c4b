import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import PostalMime from "postal-mime";
import { beforeAll, describe, expect, it } from "vitest";
import { jobs } from "@invoicing/core/jobs/all";
import { createTestEnv, expectProblem, request, type TestEnv, type TestUser } from "../support/env";
import { invoiceIn, ok, type Status } from "../invoices/fixtures";

/**
 * Payments as records (API.md section 14), manual ones: partial payments, the invoice following
 * its payments, deleting a mistake, bad input, and the races of concurrent payments.
 */
const NOW = "2026-11-22T09:30:00.000Z";
// 10 × 100.00 at 0.00 → total 1000.00; tenths are 100.00 each.
const thousand = { lineItems: [{ description: "Consulting", quantity: "10", unitPrice: "100.00", taxRate: "0" }] };

let env: TestEnv;
let alice: TestUser;
let clientId: number;

beforeAll(async () => {
  env = await createTestEnv({ now: NOW });
  alice = await env.user();
  clientId = ok(await alice.call("POST", "/clients", { name: "Globex", email: "ap@globex.test" }), 201).body.id;
});

const invoice = (status: Status = "sent", body: Record<string, unknown> = thousand) =>
  invoiceIn(env, alice, clientId, status, body);
const pay = (id: number, body: Record<string, unknown>) => alice.call("POST", `/invoices/${id}/payments`, body);
const get = async (id: number) => ok(await alice.call("GET", `/invoices/${id}`)).body;
const paymentsOf = async (id: number) => ok(await alice.call("GET", `/invoices/${id}/payments`)).body;

describe("POST /invoices/{id}/payments", () => {
  it("a partial payment keeps the invoice sent, grows amountPaid and lowers amountDue", async () => {
    const sent = await invoice();
    expect(sent).toMatchObject({ total: "1000.00", amountPaid: "0.00", amountDue: "1000.00" });
    const res = await pay(sent.id, {
      amount: "250.50",
      paymentMethod: "bank_transfer",
      reference: "SEPA-1",
      paidAt: "2026-11-20",
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("location")).toBe(`/invoices/${sent.id}/payments/${res.body.id}`);
    expect(res.body).toEqual({
      id: res.body.id,
      invoiceId: sent.id,
      amount: "250.50",
      paymentMethod: "bank_transfer",
      paidAt: "2026-11-20T00:00:00.000Z",
      reference: "SEPA-1",
      source: "manual",
      status: "succeeded",
      refundedAmount: "0.00",
      createdAt: NOW,
    });
    expect(await get(sent.id)).toMatchObject({
      status: "sent",
      amountPaid: "250.50",
      amountDue: "749.50",
      paidAt: null,
      paymentMethod: null,
      paymentReference: null,
    });
    expect(ok(await alice.call("GET", res.headers.get("location")!)).body).toEqual(res.body);
    // Reminders stay scheduled while something is due.
    const reminders = ok(await alice.call("GET", `/invoices/${sent.id}/reminders`)).body;
    expect(reminders.every((r: { status: string }) => r.status === "scheduled")).toBe(true);
  });

  it("a payment names its invoice wherever it is returned, and its payment.created event's data is the resource", async () => {
    // Payment ids are counted per invoice: two invoices' first payments are both id 1.
    const [first, second] = [await invoice(), await invoice()];
    const paid = [
      ok(await pay(first.id, { amount: "10.00", paymentMethod: "cash" }), 201).body,
      ok(await pay(second.id, { amount: "20.00", paymentMethod: "cash" }), 201).body,
    ];
    expect(paid.map((p) => [p.invoiceId, p.id])).toEqual([
      [first.id, 1],
      [second.id, 1],
    ]);
    expect((await paymentsOf(second.id)).map((p: { invoiceId: number }) => p.invoiceId)).toEqual([second.id]);
    const one = ok(await alice.call("GET", `/invoices/${second.id}/payments/1`)).body;
    expect(one).toEqual(paid[1]);
    await env.drainStream();
    const events = ok(await alice.call("GET", "/events?type=payment.created&resourceType=payment&resourceId=1")).body;
    const ofSecond = events.filter((e: { data: { invoiceId: number } }) => e.data.invoiceId === second.id);
    expect(ofSecond).toHaveLength(1);
    expect(ofSecond[0].data).toEqual(one);
    // The OpenAPI document says so too (it is built from the same response schema).
    const payment = ok(await request(env.app, "GET", "/openapi.json")).body.components.schemas.Payment;
    expect(payment.properties.invoiceId).toBeDefined();
    expect(payment.required).toContain("invoiceId");
  });

  it("the payment that reaches total makes the invoice paid with its own paidAt, method and reference", async () => {
    const sent = await invoice();
    ok(await pay(sent.id, { amount: "400.00", paymentMethod: "cash" }), 201);
    const last = ok(
      await pay(sent.id, { amount: 600, paymentMethod: "check", reference: "CHK-77", paidAt: "2026-11-21T12:00:00Z" }),
      201,
    );
    expect(last.body.amount).toBe("600.00");
    const paid = await get(sent.id);
    expect(paid).toMatchObject({
      status: "paid",
      amountPaid: "1000.00",
      amountDue: "0.00",
      paidAt: "2026-11-21T12:00:00.000Z",
      paymentMethod: "check",
      paymentReference: "CHK-77",
    });
    const reminders = ok(await alice.call("GET", `/invoices/${sent.id}/reminders`)).body;
    expect(reminders.length).toBeGreaterThan(0);
    expect(reminders.every((r: { status: string }) => r.status === "cancelled")).toBe(true);
    expect((await paymentsOf(sent.id)).map((p: { amount: string }) => p.amount)).toEqual(["400.00", "600.00"]);
  });

  it("an overdue invoice takes payments and stays overdue until paid", async () => {
    const overdue = await invoice("overdue");
    ok(await pay(overdue.id, { amount: "1.00", paymentMethod: "other" }), 201);
    expect(await get(overdue.id)).toMatchObject({ status: "overdue", amountDue: "999.00" });
    ok(await pay(overdue.id, { amount: "999.00", paymentMethod: "other" }), 201);
    expect((await get(overdue.id)).status).toBe("paid");
  });

  it("refuses bad amounts, methods, dates and references with 400, changing nothing", async () => {
    const sent = await invoice();
    const cases: [Record<string, unknown>, string][] = [
      [{ amount: "0", paymentMethod: "cash" }, "amount"],
      [{ amount: "0.00", paymentMethod: "cash" }, "amount"],
      [{ amount: "-5.00", paymentMethod: "cash" }, "amount"],
      [{ amount: -5, paymentMethod: "cash" }, "amount"],
      [{ amount: "10.001", paymentMethod: "cash" }, "amount"],
      [{ amount: 10.001, paymentMethod: "cash" }, "amount"],
      [{ amount: "ten", paymentMethod: "cash" }, "amount"],
      [{ paymentMethod: "cash" }, "amount"],
      [{ amount: "10.00", paymentMethod: "card" }, "paymentMethod"],
      [{ amount: "10.00" }, "paymentMethod"],
      [{ amount: "10.00", paymentMethod: "cash", paidAt: "2026-11-23T00:00:00Z" }, "paidAt"],
      [{ amount: "10.00", paymentMethod: "cash", paidAt: "2026-02-30" }, "paidAt"],
      [{ amount: "10.00", paymentMethod: "cash", reference: "x".repeat(201) }, "reference"],
      [{ amount: "10.00", paymentMethod: "cash", status: "succeeded" }, "status"],
    ];
    for (const [body, path] of cases) {
      const problem = expectProblem(await pay(sent.id, body), 400, "validation_error");
      expect(
        problem.errors?.map((e) => e.path),
        JSON.stringify(body),
      ).toContain(path);
    }
    expectProblem(await alice.call("POST", `/invoices/${sent.id}/payments`, "{"), 400, "malformed_json");
    expectProblem(
      await alice.call("POST", "/invoices/abc/payments", { amount: "1.00", paymentMethod: "cash" }),
      400,
      "validation_error",
    );
    expect(await get(sent.id)).toMatchObject({ amountPaid: "0.00", amountDue: "1000.00" });
    expect(await paymentsOf(sent.id)).toEqual([]);
  });

  it("more than amountDue is 422 overpayment, exactly amountDue is fine", async () => {
    const sent = await invoice();
    ok(await pay(sent.id, { amount: "999.99", paymentMethod: "cash" }), 201);
    const before = await alice.call("GET", `/invoices/${sent.id}`);
    expectProblem(await pay(sent.id, { amount: "0.02", paymentMethod: "cash" }), 422, "overpayment");
    const after = await alice.call("GET", `/invoices/${sent.id}`);
    expect(after.headers.get("etag")).toBe(before.headers.get("etag"));
    ok(await pay(sent.id, { amount: "0.01", paymentMethod: "cash" }), 201);
    expect((await get(sent.id)).status).toBe("paid");
  });

  it.each(["draft", "finalized", "paid", "void"] as const)(
    "a %s invoice takes no payment: 422 invalid_transition",
    async (status) => {
      const target = await invoice(status);
      const before = await alice.call("GET", `/invoices/${target.id}`);
      // The status is checked first: even an amount over what is due is invalid_transition here.
      expectProblem(await pay(target.id, { amount: "1.00", paymentMethod: "cash" }), 422, "invalid_transition");
      expectProblem(await pay(target.id, { amount: "5000.00", paymentMethod: "cash" }), 422, "invalid_transition");
      expect((await alice.call("GET", `/invoices/${target.id}`)).headers.get("etag")).toBe(before.headers.get("etag"));
    },
  );

  it("another user's or an unknown invoice is 404", async () => {
    const sent = await invoice();
    const bob = await env.user();
    expectProblem(
      await bob.call("POST", `/invoices/${sent.id}/payments`, { amount: "1.00", paymentMethod: "cash" }),
      404,
      "not_found",
    );
    expectProblem(await bob.call("GET", `/invoices/${sent.id}/payments`), 404, "not_found");
    expectProblem(await alice.call("GET", "/invoices/999999/payments"), 404, "not_found");
    const payment = ok(await pay(sent.id, { amount: "1.00", paymentMethod: "cash" }), 201).body;
    expectProblem(await bob.call("GET", `/invoices/${sent.id}/payments/${payment.id}`), 404, "not_found");
    expectProblem(await bob.call("DELETE", `/invoices/${sent.id}/payments/${payment.id}`), 404, "not_found");
    expectProblem(await alice.call("GET", `/invoices/${sent.id}/payments/999999`), 404, "not_found");
    // A payment is found only under its own invoice.
    const other = await invoice();
    expectProblem(await alice.call("GET", `/invoices/${other.id}/payments/${payment.id}`), 404, "not_found");
  });
});

describe("mark-paid", () => {
  it("is a payment of the whole amountDue with the given method", async () => {
    const sent = await invoice();
    ok(await pay(sent.id, { amount: "300.00", paymentMethod: "cash" }), 201);
    const paid = ok(
      await alice.call("POST", `/invoices/${sent.id}/mark-paid`, {
        paymentMethod: "bank_transfer",
        reference: "WIRE-9",
      }),
    ).body;
    expect(paid).toMatchObject({
      status: "paid",
      amountPaid: "1000.00",
      amountDue: "0.00",
      paymentMethod: "bank_transfer",
      paymentReference: "WIRE-9",
      paidAt: NOW,
    });
    const payments = await paymentsOf(sent.id);
    expect(payments.map((p: { amount: string; paymentMethod: string }) => [p.amount, p.paymentMethod])).toEqual([
      ["300.00", "cash"],
      ["700.00", "bank_transfer"],
    ]);
    expectProblem(
      await alice.call("POST", `/invoices/${sent.id}/mark-paid`, { paymentMethod: "cash" }),
      422,
      "invalid_transition",
    );
  });
});

describe("DELETE /invoices/{id}/payments/{paymentId}", () => {
  it("undoes a partial payment: amountPaid shrinks, the payment is gone", async () => {
    const sent = await invoice();
    const keep = ok(await pay(sent.id, { amount: "100.00", paymentMethod: "cash" }), 201).body;
    const mistake = ok(await pay(sent.id, { amount: "50.00", paymentMethod: "cash" }), 201).body;
    const res = await alice.call("DELETE", `/invoices/${sent.id}/payments/${mistake.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expect(await get(sent.id)).toMatchObject({ status: "sent", amountPaid: "100.00", amountDue: "900.00" });
    expect((await paymentsOf(sent.id)).map((p: { id: number }) => p.id)).toEqual([keep.id]);
    expectProblem(await alice.call("DELETE", `/invoices/${sent.id}/payments/${mistake.id}`), 404, "not_found");
  });

  it("reopens a paid invoice as sent, its paid fields null, its reminders still ahead scheduled again", async () => {
    const sent = await invoice("sent", { ...thousand, dueDate: "2026-12-22T09:30:00.000Z" });
    const payment = ok(await pay(sent.id, { amount: "1000.00", paymentMethod: "cash", reference: "R" }), 201).body;
    const paid = await get(sent.id);
    expect(paid.status).toBe("paid");
    ok(await alice.call("DELETE", `/invoices/${sent.id}/payments/${payment.id}`), 204);
    expect(await get(sent.id)).toMatchObject({
      status: "sent",
      amountPaid: "0.00",
      amountDue: "1000.00",
      paidAt: null,
      paymentMethod: null,
      paymentReference: null,
    });
    const reminders = ok(await alice.call("GET", `/invoices/${sent.id}/reminders`)).body;
    expect(reminders.map((r: { status: string }) => r.status)).toEqual([
      "scheduled",
      "scheduled",
      "scheduled",
      "scheduled",
      "scheduled",
    ]);
    // Back on the overdue job's list: once the due date passes, the job makes it overdue.
    await jobs.overdue!(env.deps, new Date("2026-12-23T00:00:00.000Z"));
    expect((await get(sent.id)).status).toBe("overdue");
  });

  it("reopens a paid invoice whose due date has passed as overdue", async () => {
    const overdue = await invoice("overdue");
    const payment = ok(await pay(overdue.id, { amount: "1000.00", paymentMethod: "cash" }), 201).body;
    ok(await alice.call("DELETE", `/invoices/${overdue.id}/payments/${payment.id}`), 204);
    expect(await get(overdue.id)).toMatchObject({ status: "overdue", amountPaid: "0.00", paidAt: null });
  });

  it("keeps a void invoice's payments: 422 invalid_transition", async () => {
    const sent = await invoice();
    const payment = ok(await pay(sent.id, { amount: "10.00", paymentMethod: "cash" }), 201).body;
    ok(await alice.call("POST", `/invoices/${sent.id}/void`));
    expectProblem(await alice.call("DELETE", `/invoices/${sent.id}/payments/${payment.id}`), 422, "invalid_transition");
    expect(await get(sent.id)).toMatchObject({ status: "void", amountPaid: "10.00" });
    expect(await paymentsOf(sent.id)).toHaveLength(1);
  });
});

describe("reminders ask for amountDue", () => {
  it("a partly paid invoice's reminder email states what is left", async () => {
    const sent = await invoice("sent", { ...thousand, dueDate: "2026-12-22T09:30:00.000Z" });
    ok(await pay(sent.id, { amount: "250.00", paymentMethod: "cash" }), 201);
    await jobs.reminders!(env.deps, new Date("2026-12-19T09:30:00.000Z"));
    const files = readdirSync(env.outboxDir)
      .filter((f) => f.endsWith(".eml"))
      .sort();
    const mails = await Promise.all(files.map((f) => PostalMime.parse(readFileSync(join(env.outboxDir, f), "utf8"))));
    const reminder = mails.find((m) => m.text?.includes(sent.publicToken) && /^Reminder/.test(m.subject ?? ""));
    expect(reminder?.text).toContain("750.00");
    expect(reminder?.text).not.toMatch(/Amount due:[^\n]*1,000\.00/);
  });
});

describe("races", () => {
  it("20 concurrent payments of 10 % each: exactly 10 succeed, the invoice ends paid at total, the rest are overpayment", async () => {
    const sent = await invoice();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        pay(sent.id, { amount: "100.00", paymentMethod: "cash", reference: `P${i}` }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 422)).toHaveLength(10);
    for (const r of results.filter((r) => r.status === 422)) expectProblem(r, 422, "overpayment");
    const after = await get(sent.id);
    expect(after).toMatchObject({ status: "paid", amountPaid: "1000.00", amountDue: "0.00" });
    const payments = await paymentsOf(sent.id);
    expect(payments).toHaveLength(10);
    expect(new Set(payments.map((p: { id: number }) => p.id)).size).toBe(10);
    // The completing payment is one of those that succeeded.
    const winners = results.filter((r) => r.status === 201).map((r) => r.body.reference);
    expect(winners).toContain(after.paymentReference);
  });

  it("a payment racing a void never leaves a void invoice with a grown amountPaid", async () => {
    for (let round = 0; round < 5; round++) {
      const sent = await invoice();
      const [payment, voided] = await Promise.all([
        pay(sent.id, { amount: "100.00", paymentMethod: "cash" }),
        alice.call("POST", `/invoices/${sent.id}/void`),
      ]);
      expect(voided.status).toBe(200);
      const after = await get(sent.id);
      expect(after.status).toBe("void");
      const payments = await paymentsOf(sent.id);
      if (payment.status === 201) {
        // The payment came first: the void kept it, and amountPaid is exactly its amount.
        expect(after.amountPaid).toBe("100.00");
        expect(payments).toHaveLength(1);
      } else {
        expectProblem(payment, 422, "invalid_transition");
        expect(after.amountPaid).toBe("0.00");
        expect(payments).toEqual([]);
      }
    }
  });
});
