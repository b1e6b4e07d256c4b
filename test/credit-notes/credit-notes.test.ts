import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import PostalMime from "postal-mime";
import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { deliverQueued, type OutboxItem } from "@invoicing/core/email/outbox";
import { beforeAll, describe, expect, it } from "vitest";
import { LEASE_MS } from "@invoicing/core/idempotency/records";
import { invoiceKey } from "@invoicing/core/invoices/model";
import { centsOf } from "@invoicing/core/money/money";
import { findPublicCreditNote, findPublicInvoice } from "@invoicing/core/public/documents";
import { gate, responseStore } from "../idempotency/faults";
import { invoiceIn, ok, type Status } from "../invoices/fixtures";
import { partition } from "../reliability/harness";
import { createTestEnv, expectProblem, type TestEnv } from "../support/env";

/**
 * Credit notes through HTTP (API.md section 17): issuing one and what it does to its invoice, the
 * lists, send, events, idempotency and the issue's bad input — each refused with nothing written.
 */
const NOW = "2026-11-22T09:30:00.000Z";
// A: 10 × 100.00 at 19 % (1000.00 + 190.00), B: 2 × 50.00 zero rated (100.00): total 1290.00.
const LINES = {
  lineItems: [
    { description: "Consulting", quantity: "10", unitPrice: "100.00", taxRate: "0.19" },
    { description: "Travel", quantity: "2", unitPrice: "50.00" },
  ],
};

let env: TestEnv;

beforeAll(async () => {
  env = await createTestEnv({ now: NOW });
});

async function world() {
  const user = await env.user();
  const clientId = ok(await user.call("POST", "/clients", { name: "Globex", email: "ap@globex.test" }), 201).body.id;
  const invoice = (status: Status = "sent", body: Record<string, unknown> = LINES) =>
    invoiceIn(env, user, clientId, status, body);
  const credit = (id: number, body?: unknown, headers?: Record<string, string>) =>
    user.call("POST", `/invoices/${id}/credit-notes`, body, headers);
  const get = async (path: string) => ok(await user.call("GET", path)).body;
  return { user, clientId, invoice, credit, get };
}

const PUBLIC_TOKEN = /^[A-Za-z0-9_-]{32}$/;

describe("POST /invoices/{id}/credit-notes", () => {
  it("a partial credit note: its lines and totals, and the invoice's creditedAmount and amountDue", async () => {
    const { user, clientId, invoice, credit, get } = await world();
    const sent = await invoice();
    const res = credit(sent.id, {
      lineItems: [{ invoiceLineId: 1, quantity: "2" }],
      reason: "order_change",
      memo: "Two days were not worked",
    });
    const created = ok(await res, 201);
    const note = created.body;
    expect(created.headers.get("location")).toBe(`/credit-notes/${note.id}`);
    expect(created.headers.get("etag")).toBe('"1"');
    expect(note.publicToken).toMatch(PUBLIC_TOKEN);
    expect(note.publicToken).not.toBe(sent.publicToken);
    expect(note).toEqual({
      id: 1,
      invoiceId: sent.id,
      invoiceNumber: "INV-000001",
      creditNoteNumber: "CN-000001",
      status: "issued",
      reason: "order_change",
      memo: "Two days were not worked",
      currency: "USD",
      issueDate: NOW,
      lineItems: [
        {
          id: 1,
          invoiceLineId: 1,
          description: "Consulting",
          quantity: "2.00",
          unitPrice: "100.00",
          taxRate: "0.19",
          taxCategory: "standard",
          amount: "200.00",
          sortOrder: 0,
        },
      ],
      subtotal: "200.00",
      taxTotal: "38.00",
      total: "238.00",
      taxBreakdown: [{ taxCategory: "standard", taxRate: "0.19", taxableAmount: "200.00", taxAmount: "38.00" }],
      taxExemptionReason: null,
      amountAppliedToDue: "238.00",
      amountToRefund: "0.00",
      clientId,
      clientName: "Globex",
      clientEmail: "ap@globex.test",
      clientAddress: null,
      clientTaxId: null,
      seller: sent.seller,
      peppolDelivery: null,
      publicToken: note.publicToken,
      sentAt: null,
      createdAt: NOW,
    });
    expect(await get(`/invoices/${sent.id}`)).toMatchObject({
      status: "sent",
      total: "1290.00",
      amountPaid: "0.00",
      creditedAmount: "238.00",
      amountDue: "1052.00",
      voidedAt: null,
    });
    const read = ok(await user.call("GET", `/credit-notes/${note.id}`));
    expect(read.body).toEqual(note);
    expect(read.headers.get("etag")).toBe('"1"');
  });

  it("without lines, credits what is left of every line: the invoice is wholly credited and becomes void", async () => {
    const { invoice, credit, get } = await world();
    const sent = await invoice();
    ok(await credit(sent.id, { lineItems: [{ invoiceLineId: 1, quantity: "2.5" }] }), 201);
    env.clock.set("2026-11-23T10:00:00.000Z");
    try {
      const rest = ok(await credit(sent.id), 201).body;
      expect(rest.creditNoteNumber).toBe("CN-000002");
      expect(rest.lineItems.map((l: any) => [l.invoiceLineId, l.quantity, l.amount, l.taxCategory])).toEqual([
        [1, "7.50", "750.00", "standard"],
        [2, "2.00", "100.00", "zero_rated"],
      ]);
      expect(rest).toMatchObject({
        subtotal: "850.00",
        taxTotal: "142.50",
        total: "992.50",
        amountAppliedToDue: "992.50",
        amountToRefund: "0.00",
        reason: null,
        memo: null,
        issueDate: "2026-11-23T10:00:00.000Z",
        taxBreakdown: [
          { taxCategory: "standard", taxRate: "0.19", taxableAmount: "750.00", taxAmount: "142.50" },
          { taxCategory: "zero_rated", taxRate: "0.00", taxableAmount: "100.00", taxAmount: "0.00" },
        ],
      });
      const voided = await get(`/invoices/${sent.id}`);
      expect(voided).toMatchObject({
        status: "void",
        creditedAmount: "1290.00",
        amountDue: "0.00",
        voidedAt: "2026-11-23T10:00:00.000Z",
      });
      // A void invoice takes no more credit notes.
      expectProblem(await credit(sent.id), 422, "invalid_transition");
      // Its reminders count as cancelled, read from its status.
      const reminders = await get(`/invoices/${sent.id}/reminders`);
      expect(reminders.length).toBeGreaterThan(0);
      expect(reminders.every((r: { status: string }) => r.status === "cancelled")).toBe(true);
    } finally {
      env.clock.set(NOW);
    }
  });

  it("of a paid invoice: nothing is applied to amountDue, all of it is to be refunded; the rest voids it", async () => {
    const { invoice, credit, get } = await world();
    const paid = await invoice("paid");
    const note = ok(await credit(paid.id, { lineItems: [{ invoiceLineId: 2, quantity: "1" }] }), 201).body;
    expect(note).toMatchObject({ total: "50.00", amountAppliedToDue: "0.00", amountToRefund: "50.00" });
    expect(await get(`/invoices/${paid.id}`)).toMatchObject({
      status: "paid",
      amountPaid: "1290.00",
      creditedAmount: "50.00",
      amountDue: "0.00",
    });
    const rest = ok(await credit(paid.id), 201).body;
    expect(rest).toMatchObject({ total: "1240.00", amountAppliedToDue: "0.00", amountToRefund: "1240.00" });
    const voided = await get(`/invoices/${paid.id}`);
    expect(voided).toMatchObject({ status: "void", amountPaid: "1290.00", creditedAmount: "1290.00", voidedAt: NOW });
    // Its payments stay recorded.
    expect(await get(`/invoices/${paid.id}/payments`)).toHaveLength(1);
  });

  it("that leaves nothing due makes a partly paid invoice paid, with the last payment's method and reference", async () => {
    const { user, invoice, credit, get } = await world();
    const sent = await invoice();
    const pay = (body: Record<string, unknown>) => user.call("POST", `/invoices/${sent.id}/payments`, body);
    ok(await pay({ amount: "90.00", paymentMethod: "check", reference: "CHK-1", paidAt: "2026-11-19" }), 201);
    ok(await pay({ amount: "200.00", paymentMethod: "bank_transfer", reference: "SEPA-2", paidAt: "2026-11-20" }), 201);
    env.clock.set("2026-11-24T08:00:00.000Z");
    try {
      const note = ok(await credit(sent.id, { lineItems: [{ invoiceLineId: 1 }] }), 201).body;
      // 1190.00 credited against 1000.00 due: 1000.00 applied, 190.00 to refund.
      expect(note).toMatchObject({ total: "1190.00", amountAppliedToDue: "1000.00", amountToRefund: "190.00" });
      expect(await get(`/invoices/${sent.id}`)).toMatchObject({
        status: "paid",
        amountPaid: "290.00",
        creditedAmount: "1190.00",
        amountDue: "0.00",
        paidAt: "2026-11-24T08:00:00.000Z",
        paymentMethod: "bank_transfer",
        paymentReference: "SEPA-2",
        voidedAt: null,
      });
      expectProblem(await pay({ amount: "1.00", paymentMethod: "cash" }), 422, "invalid_transition");
    } finally {
      env.clock.set(NOW);
    }
  });

  it("a free line credits goodwill; a cent left due keeps the invoice sent", async () => {
    const { invoice, credit, get } = await world();
    // 1190.00 of the line, then a free 99.99 of the 100.00 left.
    const sent = await invoice();
    ok(await credit(sent.id, { lineItems: [{ invoiceLineId: 1 }] }), 201);
    const goodwill = ok(await credit(sent.id, { lineItems: [{ description: "Goodwill", unitPrice: "99.99" }] }), 201);
    expect(goodwill.body.lineItems[0]).toEqual({
      id: 1,
      invoiceLineId: null,
      description: "Goodwill",
      quantity: "1.00",
      unitPrice: "99.99",
      taxRate: "0.00",
      taxCategory: "zero_rated",
      amount: "99.99",
      sortOrder: 0,
    });
    expect(await get(`/invoices/${sent.id}`)).toMatchObject({
      status: "sent",
      creditedAmount: "1289.99",
      amountDue: "0.01",
    });
  });

  it("a deleted payment leaves the invoice paid while its credit notes still cover it", async () => {
    const { user, invoice, credit, get } = await world();
    const sent = await invoice();
    const pay = (amount: string, reference: string) =>
      user.call("POST", `/invoices/${sent.id}/payments`, { amount, paymentMethod: "cash", reference });
    const first = ok(await pay("100.00", "R-1"), 201).body;
    ok(await pay("200.00", "R-2"), 201);
    ok(await credit(sent.id, { lineItems: [{ invoiceLineId: 1 }] }), 201); // 1190.00: 300 + 1190 ≥ 1290
    expect(await get(`/invoices/${sent.id}`)).toMatchObject({ status: "paid", paymentReference: "R-2" });
    ok(await user.call("DELETE", `/invoices/${sent.id}/payments/${first.id}`), 204);
    expect(await get(`/invoices/${sent.id}`)).toMatchObject({
      status: "paid",
      amountPaid: "200.00",
      creditedAmount: "1190.00",
      amountDue: "0.00",
    });
    ok(await user.call("DELETE", `/invoices/${sent.id}/payments/${first.id + 1}`), 204);
    expect(await get(`/invoices/${sent.id}`)).toMatchObject({
      status: "sent",
      amountPaid: "0.00",
      amountDue: "100.00",
      paidAt: null,
      paymentMethod: null,
      paymentReference: null,
    });
  });

  it("a finalized invoice keeps its status; payments are then limited by the new amountDue", async () => {
    const { user, invoice, credit, get } = await world();
    const finalized = await invoice("finalized");
    ok(await credit(finalized.id, { lineItems: [{ invoiceLineId: 1, quantity: "2" }] }), 201);
    expect(await get(`/invoices/${finalized.id}`)).toMatchObject({ status: "finalized", amountDue: "1052.00" });
    ok(await user.call("POST", `/invoices/${finalized.id}/send`, { to: "ap@globex.test" }));
    const pay = (amount: string) =>
      user.call("POST", `/invoices/${finalized.id}/payments`, { amount, paymentMethod: "cash" });
    expectProblem(await pay("1052.01"), 422, "overpayment");
    ok(await pay("52.00"), 201);
    // mark-paid records a payment of what is due, not of the total.
    const paid = ok(await user.call("POST", `/invoices/${finalized.id}/mark-paid`, { paymentMethod: "cash" })).body;
    expect(paid).toMatchObject({ status: "paid", amountPaid: "1052.00", creditedAmount: "238.00", amountDue: "0.00" });
    const payments = await get(`/invoices/${finalized.id}/payments`);
    expect(payments.map((p: { amount: string }) => p.amount)).toEqual(["52.00", "1000.00"]);
  });

  it("a free line with a tax rate is standard-rated; a line's quantity defaults to what is left of it", async () => {
    const { invoice, credit } = await world();
    const sent = await invoice();
    const note = ok(
      await credit(sent.id, {
        lineItems: [
          { description: "Late delivery", quantity: 2, unitPrice: 10, taxRate: "0.19" },
          { invoiceLineId: 2 },
        ],
      }),
      201,
    ).body;
    expect(note.lineItems.map((l: any) => [l.invoiceLineId, l.quantity, l.taxCategory, l.amount])).toEqual([
      [null, "2.00", "standard", "20.00"],
      [2, "2.00", "zero_rated", "100.00"],
    ]);
    expect(note).toMatchObject({ subtotal: "120.00", taxTotal: "3.80", total: "123.80" });
    // Line 2 is wholly credited now: crediting it again, by default or by quantity, exceeds it.
    expectProblem(await credit(sent.id, { lineItems: [{ invoiceLineId: 2 }] }), 422, "credit_exceeds_invoice");
    const more = await credit(sent.id, { lineItems: [{ invoiceLineId: 2, quantity: "0.01" }] });
    expect(expectProblem(more, 422, "credit_exceeds_invoice").detail).toMatch(/line 2 .* 0\.00 left/);
  });

  it("invoices written before credit notes read creditedAmount 0.00 and voidedAt null, and take credit notes", async () => {
    const { user, invoice, credit, get } = await world();
    const sent = await invoice();
    await env.deps.db.doc.send(
      new UpdateCommand({
        TableName: env.deps.db.table,
        Key: invoiceKey(user.userId, sent.id),
        UpdateExpression: "REMOVE creditedAmount, voidedAt",
      }),
    );
    expect(await get(`/invoices/${sent.id}`)).toMatchObject({
      creditedAmount: "0.00",
      voidedAt: null,
      amountDue: "1290.00",
    });
    ok(await credit(sent.id, { lineItems: [{ invoiceLineId: 2 }] }), 201);
    expect(await get(`/invoices/${sent.id}`)).toMatchObject({ creditedAmount: "100.00", amountDue: "1190.00" });
  });

  it("a line's credits never exceed its amount nor its tax: the last part takes exactly the rest", async () => {
    const { invoice, credit, get } = await world();
    // A: 0.03 × 0.50 at 100 % — amount 0.02 (0.015 rounded), tax 0.02; B: 1 × 10.00 at 19 %: 11.90.
    const sent = await invoice("sent", {
      lineItems: [
        { description: "Tiny", quantity: "0.03", unitPrice: "0.50", taxRate: "1" },
        { description: "Big", quantity: "1", unitPrice: "10.00", taxRate: "0.19" },
      ],
    });
    expect(sent.total).toBe("11.94");
    const partOfA = (note: { lineItems: { invoiceLineId: number | null; amount: string }[] }) =>
      note.lineItems.find((l) => l.invoiceLineId === 1)?.amount;
    // Each 0.01 of A alone rounds to 0.01 + 0.01 tax: the first two take all of A's 0.02 + 0.02.
    const first = ok(await credit(sent.id, { lineItems: [{ invoiceLineId: 1, quantity: "0.01" }] }), 201).body;
    const second = ok(await credit(sent.id, { lineItems: [{ invoiceLineId: 1, quantity: "0.01" }] }), 201).body;
    for (const note of [first, second]) {
      expect({ amount: partOfA(note), subtotal: note.subtotal, taxTotal: note.taxTotal }).toEqual({
        amount: "0.01",
        subtotal: "0.01",
        taxTotal: "0.01",
      });
    }
    // The last 0.01 of A takes exactly the rest: nothing, so alone it credits nothing.
    expectProblem(
      await credit(sent.id, { lineItems: [{ invoiceLineId: 1, quantity: "0.01" }] }),
      422,
      "empty_credit_note",
    );
    const third = ok(
      await credit(sent.id, {
        lineItems: [
          { invoiceLineId: 1, quantity: "0.01" },
          { invoiceLineId: 2, quantity: "0.5" },
        ],
      }),
      201,
    ).body;
    expect(partOfA(third)).toBe("0.00");
    expect(third).toMatchObject({ subtotal: "5.00", taxTotal: "0.95", total: "5.95" });
    // At 100 %, A's tax in the breakdowns adds up to the line's own 0.02, never more.
    const taxAt100 = [first, second, third]
      .flatMap((note) => note.taxBreakdown)
      .filter((entry: { taxRate: string }) => entry.taxRate === "1.00")
      .reduce((sum: bigint, entry: { taxAmount: string }) => sum + centsOf(entry.taxAmount), 0n);
    expect(taxAt100).toBe(2n);
    // "Credit everything left" credits exactly the rest of the invoice, which it voids.
    const rest = ok(await credit(sent.id), 201).body;
    expect(rest).toMatchObject({ total: "5.95", lineItems: [expect.objectContaining({ invoiceLineId: 2 })] });
    expect(await get(`/invoices/${sent.id}`)).toMatchObject({ status: "void", creditedAmount: "11.94" });
  });

  it("a credit note's public token finds it through the byToken index, and nothing else", async () => {
    const { user, invoice, credit } = await world();
    const sent = await invoice();
    const note = ok(await credit(sent.id, { lineItems: [{ invoiceLineId: 2 }] }), 201).body;
    const found = await findPublicCreditNote(env.deps, note.publicToken);
    expect(found).toMatchObject({ id: note.id, userId: user.userId, creditNoteNumber: "CN-000001" });
    expect(await findPublicInvoice(env.deps, note.publicToken)).toBeUndefined();
    expect(await findPublicCreditNote(env.deps, sent.publicToken)).toBeUndefined();
    expect(await findPublicCreditNote(env.deps, "x".repeat(32))).toBeUndefined();
  });

  it("void sets voidedAt", async () => {
    const { user, invoice } = await world();
    const sent = await invoice();
    env.clock.set("2026-11-25T12:00:00.000Z");
    try {
      const voided = ok(await user.call("POST", `/invoices/${sent.id}/void`)).body;
      expect(voided).toMatchObject({ status: "void", voidedAt: "2026-11-25T12:00:00.000Z", creditedAmount: "0.00" });
    } finally {
      env.clock.set(NOW);
    }
  });
});

describe("bad input: a 4xx naming the field, nothing written", () => {
  it("every case of the issue's list", async () => {
    const { user, invoice, credit } = await world();
    const sent = await invoice();
    const draft = await invoice("draft");
    const voided = await invoice("void");
    const before = await partition(env.deps.db, user.userId);
    const invalid = async (body: unknown, path: string) => {
      const problem = expectProblem(await credit(sent.id, body), 400, "validation_error");
      expect(problem.errors?.map((e) => e.path)).toEqual([path]);
      return problem;
    };
    const unknownLine = await invalid(
      { lineItems: [{ invoiceLineId: 1 }, { invoiceLineId: 99 }] },
      "lineItems.1.invoiceLineId",
    );
    expect(unknownLine.errors![0]!.message).toMatch(/no line 99/);
    await invalid({ lineItems: [{ invoiceLineId: 1, quantity: "0" }] }, "lineItems.0.quantity");
    await invalid({ lineItems: [{ invoiceLineId: 1, quantity: -1 }] }, "lineItems.0.quantity");
    await invalid({ lineItems: [{ invoiceLineId: 1, quantity: "1.001" }] }, "lineItems.0.quantity");
    await invalid({ lineItems: [{ description: "Goodwill", unitPrice: "0" }] }, "lineItems.0.unitPrice");
    await invalid({ lineItems: [{ description: "Goodwill", unitPrice: "-5.00" }] }, "lineItems.0.unitPrice");
    await invalid({ lineItems: [{ description: "Goodwill", unitPrice: "5.001" }] }, "lineItems.0.unitPrice");
    await invalid({ lineItems: [{ description: "Goodwill" }] }, "lineItems.0.unitPrice");
    await invalid({ lineItems: [{ invoiceLineId: 1, unitPrice: "5.00" }] }, "lineItems.0.unitPrice");
    await invalid({ reason: "mistake" }, "reason");
    await invalid({ memo: "x".repeat(5001) }, "memo");
    await invalid({ status: "issued" }, "status");
    // More of a line than is left, or more than the invoice's total.
    expectProblem(
      await credit(sent.id, { lineItems: [{ invoiceLineId: 1, quantity: "10.01" }] }),
      422,
      "credit_exceeds_invoice",
    );
    expectProblem(
      await credit(sent.id, {
        lineItems: [
          { invoiceLineId: 1, quantity: "6" },
          { invoiceLineId: 1, quantity: "5" },
        ],
      }),
      422,
      "credit_exceeds_invoice",
    );
    const tooMuch = await credit(sent.id, {
      lineItems: [{ description: "Everything and more", unitPrice: "1290.01" }],
    });
    expect(expectProblem(tooMuch, 422, "credit_exceeds_invoice").detail).toMatch(/1290\.01 .* 1290\.00/);
    expectProblem(await credit(sent.id, { lineItems: [] }), 422, "empty_credit_note");
    // A draft or a void invoice; another user's invoice.
    expectProblem(await credit(draft.id), 422, "invalid_transition");
    expectProblem(await credit(voided.id, { lineItems: [{ invoiceLineId: 1 }] }), 422, "invalid_transition");
    const mallory = await env.user();
    expectProblem(await mallory.call("POST", `/invoices/${sent.id}/credit-notes`, {}), 404, "not_found");
    expectProblem(await mallory.call("GET", "/credit-notes/1"), 404, "not_found");
    // Nothing half-written: the user's partition is exactly as it was.
    expect(await partition(env.deps.db, user.userId)).toEqual(before);
    // And the numbers go on without a gap.
    expect(ok(await credit(sent.id, { lineItems: [{ invoiceLineId: 2 }] }), 201).body.creditNoteNumber).toBe(
      "CN-000001",
    );
  });

  it("a credit note of a discount line alone has a negative total: empty_credit_note", async () => {
    const { invoice, credit } = await world();
    const sent = await invoice("sent", {
      lineItems: [
        { description: "Design", quantity: "1", unitPrice: "500.00" },
        { description: "Loyalty discount", quantity: "1", unitPrice: "-50.00" },
      ],
    });
    const refused = await credit(sent.id, { lineItems: [{ invoiceLineId: 2 }] });
    expect(expectProblem(refused, 422, "empty_credit_note").detail).toMatch(/-50\.00/);
    // Credited with its discount, the rest is positive: a credited discount line is negative.
    const note = ok(await credit(sent.id), 201).body;
    expect(note.lineItems.map((l: { amount: string }) => l.amount)).toEqual(["500.00", "-50.00"]);
    expect(note.total).toBe("450.00");
  });
});

describe("lists", () => {
  it("GET /credit-notes newest first, by invoice and by client; GET /invoices/{id}/credit-notes oldest first", async () => {
    const { user, clientId, invoice, credit, get } = await world();
    const first = await invoice();
    const second = await invoice();
    const a = ok(await credit(first.id, { lineItems: [{ invoiceLineId: 2, quantity: "1" }] }), 201).body;
    const b = ok(await credit(second.id, { lineItems: [{ invoiceLineId: 2 }] }), 201).body;
    const c = ok(await credit(first.id, { lineItems: [{ invoiceLineId: 2 }] }), 201).body;
    const other = ok(await user.call("POST", "/clients", { name: "Initech" }), 201).body.id;
    const ids = (list: { id: number }[]) => list.map((n) => n.id);
    expect(ids(await get("/credit-notes"))).toEqual([c.id, b.id, a.id]);
    expect(await get(`/credit-notes/${a.id}`)).toEqual(a);
    expect(ids(await get(`/credit-notes?invoiceId=${first.id}`))).toEqual([c.id, a.id]);
    expect(ids(await get(`/credit-notes?clientId=${clientId}`))).toEqual([c.id, b.id, a.id]);
    expect(ids(await get(`/credit-notes?clientId=${clientId}&invoiceId=${second.id}`))).toEqual([b.id]);
    expect(await get(`/credit-notes?clientId=${other}&invoiceId=${second.id}`)).toEqual([]);
    expect(await get(`/credit-notes?clientId=${other}`)).toEqual([]);
    expect(await get("/credit-notes?invoiceId=999")).toEqual([]);
    // Pagination (section 4): a full page has a Link to the next, whose cursor resumes after it.
    const page = ok(await user.call("GET", "/credit-notes?limit=2"));
    expect(ids(page.body)).toEqual([c.id, b.id]);
    const next = new URL(/<([^>]+)>; rel="next"/.exec(page.headers.get("link")!)![1]!);
    expect(next.searchParams.get("offset")).toBe("2");
    expect(ids(await get(`${next.pathname}${next.search}`))).toEqual([a.id]);
    expectProblem(await user.call("GET", "/credit-notes?limit=201"), 400, "validation_error");
    expect(await get(`/invoices/${first.id}/credit-notes`)).toEqual([a, c]);
    expect(await get(`/invoices/${second.id}/credit-notes`)).toEqual([b]);
    expectProblem(await user.call("GET", "/invoices/999/credit-notes"), 404, "not_found");
  });
});

describe("POST /credit-notes/{id}/send", () => {
  it("emails it with its PDF named for its number; may be repeated; recipient rules as for invoices", async () => {
    const { user, credit, get } = await world();
    const noEmail = ok(await user.call("POST", "/clients", { name: "Hooli" }), 201).body.id;
    const sent = await invoiceIn(env, user, noEmail, "sent", LINES);
    const note = ok(await credit(sent.id, { lineItems: [{ invoiceLineId: 2 }] }), 201).body;
    expectProblem(await user.call("POST", `/credit-notes/${note.id}/send`), 422, "client_email_missing");
    const first = ok(await user.call("POST", `/credit-notes/${note.id}/send`, { to: "ap@hooli.test" }));
    expect(first.body).toEqual({ ...note, sentAt: NOW });
    expect(first.headers.get("etag")).toBe('"2"');
    env.clock.set("2026-11-22T11:00:00.000Z");
    try {
      const again = ok(await user.call("POST", `/credit-notes/${note.id}/send`, { to: "books@hooli.test" })).body;
      expect(again).toMatchObject({ status: "issued", sentAt: "2026-11-22T11:00:00.000Z" });
    } finally {
      env.clock.set(NOW);
    }
    const emails = (await partition(env.deps.db, user.userId)).filter(
      (item) =>
        String(item.sk).startsWith("OUTBOX#") &&
        item.attachment !== undefined &&
        (item.attachment as any).kind === "credit_note_pdf",
    );
    expect(emails.map((e) => [e.to, e.attachment, e.subject])).toEqual([
      [
        "ap@hooli.test",
        { kind: "credit_note_pdf", creditNoteId: note.id },
        `Credit note CN-000001 for invoice ${sent.invoiceNumber}: USD 100.00`,
      ],
      [
        "books@hooli.test",
        { kind: "credit_note_pdf", creditNoteId: note.id },
        `Credit note CN-000001 for invoice ${sent.invoiceNumber}: USD 100.00`,
      ],
    ]);
    expect(String(emails[0]!.text)).toContain("Attached: CN-000001.pdf");
    // Delivered as the stream subscriber does: the PDF drawn then, attached under the credit note's number.
    const before = new Set(readdirSync(env.outboxDir));
    expect(await deliverQueued(env.deps, emails[0] as unknown as OutboxItem)).toBe("delivered");
    const [file] = readdirSync(env.outboxDir).filter((f) => !before.has(f));
    const mail = await PostalMime.parse(readFileSync(join(env.outboxDir, file!), "utf8"));
    expect(mail.to?.map((a) => a.address)).toEqual(["ap@hooli.test"]);
    expect(mail.attachments.map((a) => [a.filename, a.mimeType])).toEqual([["CN-000001.pdf", "application/pdf"]]);
    const pdf = mail.attachments[0]!.content;
    const bytes = typeof pdf === "string" ? Buffer.from(pdf) : new Uint8Array(pdf as ArrayBuffer);
    expect(Buffer.from(bytes.slice(0, 5)).toString("latin1")).toBe("%PDF-");
    // The client's email is the default recipient.
    const { invoice: invoice2, credit: credit2, user: user2 } = await world();
    const other = ok(await credit2((await invoice2()).id, { lineItems: [{ invoiceLineId: 2 }] }), 201).body;
    ok(await user2.call("POST", `/credit-notes/${other.id}/send`));
    expect((await get(`/credit-notes/${note.id}`)).sentAt).toBe("2026-11-22T11:00:00.000Z");
    expectProblem(await user.call("POST", "/credit-notes/999/send"), 404, "not_found");
  });

  it("counts against the email quota: past it, 429 and nothing changes", async () => {
    const quotaEnv = await createTestEnv({ now: NOW, extraDeps: { emailDailyQuota: 2 } });
    const user = await quotaEnv.user();
    const clientId = ok(await user.call("POST", "/clients", { name: "Globex", email: "ap@globex.test" }), 201).body.id;
    const sent = await invoiceIn(quotaEnv, user, clientId, "sent", LINES); // email 1
    const note = ok(await user.call("POST", `/invoices/${sent.id}/credit-notes`, {}), 201).body;
    ok(await user.call("POST", `/credit-notes/${note.id}/send`)); // email 2
    const before = await partition(quotaEnv.deps.db, user.userId);
    const refused = await user.call("POST", `/credit-notes/${note.id}/send`);
    expectProblem(refused, 429, "email_quota_exceeded");
    expect(refused.headers.get("retry-after")).toBe(String(24 * 3600)); // when the oldest of the two leaves the window
    expect(await partition(quotaEnv.deps.db, user.userId)).toEqual(before);
  });
});

describe("events and idempotency", () => {
  it("credit_note.created|sent, and invoice.credited / invoice.paid / invoice.voided as the status changed", async () => {
    const { user, invoice, credit } = await world();
    const credited = await invoice();
    const paidByCredit = await invoice();
    ok(
      await user.call("POST", `/invoices/${paidByCredit.id}/payments`, { amount: "1000.00", paymentMethod: "cash" }),
      201,
    );
    const a = ok(await credit(credited.id, { lineItems: [{ invoiceLineId: 2 }] }), 201).body;
    ok(await credit(paidByCredit.id, { lineItems: [{ invoiceLineId: 1, quantity: "3" }] }), 201);
    ok(await credit(credited.id), 201);
    ok(await user.call("POST", `/credit-notes/${a.id}/send`));
    await env.drainStream();
    const events = ok(await user.call("GET", "/events?limit=200")).body.reverse();
    const of = (resourceType: string, resourceId: number) =>
      events.filter((e: any) => e.resourceType === resourceType && e.resourceId === resourceId).map((e: any) => e.type);
    expect(of("invoice", credited.id).slice(-2)).toEqual(["invoice.credited", "invoice.voided"]);
    expect(of("invoice", paidByCredit.id).slice(-2)).toEqual(["invoice.partially_paid", "invoice.paid"]);
    expect(of("credit_note", a.id)).toEqual(["credit_note.created", "credit_note.sent"]);
    const created = events.find((e: any) => e.type === "credit_note.created" && e.resourceId === a.id);
    expect(created.data).toEqual(a);
    const voided = events.filter((e: any) => e.type === "invoice.voided" && e.resourceId === credited.id);
    expect(voided[0].data).toMatchObject({ creditedAmount: "1290.00", voidedAt: NOW, status: "void" });
  });

  it("an Idempotency-Key replays the 201 and issues nothing twice", async () => {
    const { user, invoice, credit } = await world();
    const sent = await invoice();
    const body = { lineItems: [{ invoiceLineId: 1, quantity: "1" }] };
    const first = ok(await credit(sent.id, body, { "Idempotency-Key": "cn-1" }), 201);
    const again = ok(await credit(sent.id, body, { "Idempotency-Key": "cn-1" }), 201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("location")).toBe(first.headers.get("location"));
    expectProblem(
      await credit(sent.id, { lineItems: [{ invoiceLineId: 1, quantity: "2" }] }, { "Idempotency-Key": "cn-1" }),
      422,
      "idempotency_key_reused",
    );
    const notes = (await partition(env.deps.db, user.userId)).filter((i) => String(i.sk).startsWith("CREDITNOTE#"));
    expect(notes).toHaveLength(1);
    const sendOnce = () =>
      user.call("POST", `/credit-notes/${first.body.id}/send`, {}, { "Idempotency-Key": "send-1" });
    ok(await sendOnce());
    expect((await sendOnce()).headers.get("idempotent-replayed")).toBe("true");
    const emails = (await partition(env.deps.db, user.userId)).filter((i) => String(i.sk).startsWith("OUTBOX#"));
    expect(emails).toHaveLength(2); // the invoice's and one of the credit note
  });

  it("a crash after the credit note is issued and before its response is stored: the retry gets it, issues nothing", async () => {
    const { user, invoice, credit } = await world();
    const sent = await invoice();
    const body = { lineItems: [{ invoiceLineId: 1, quantity: "1" }] };
    const crash = gate(env.deps.db, responseStore);
    try {
      const doomed = credit(sent.id, body, { "Idempotency-Key": "cn-crash" });
      await Promise.race([crash.reached, doomed.then((r) => Promise.reject(new Error(`finished: ${r.status}`)))]);
      // The process "died" here: the credit note is issued, its response not kept.
      env.clock.advance(LEASE_MS + 1);
      const retry = await credit(sent.id, body, { "Idempotency-Key": "cn-crash" });
      expect(retry.status).toBe(201);
      expect(retry.headers.get("idempotent-replayed")).toBe("true");
      expect(retry.headers.get("location")).toBe(`/credit-notes/${retry.body.id}`);
      expect(retry.body).toMatchObject({ creditNoteNumber: "CN-000001", total: "119.00" });
      const notes = (await partition(env.deps.db, user.userId)).filter((i) => String(i.sk).startsWith("CREDITNOTE#"));
      expect(notes).toHaveLength(1);
      crash.release();
      expect((await doomed).body).toEqual(retry.body);
    } finally {
      crash.release();
      crash.remove();
      env.clock.set(NOW);
    }
  });
});
