import { beforeAll, describe, expect, it } from "vitest";
import { jobs } from "@invoicing/core/jobs/all";
import { invoiceIn, ok } from "../invoices/fixtures";
import { createTestEnv, expectProblem, type TestEnv, type TestResponse, type TestUser } from "../support/env";

/**
 * Credit notes racing each other, payments, a void and the overdue job on one invoice (API.md
 * section 17): whoever wins, the invoice's amounts hold together — amountDue is never negative and
 * is max(0, total − amountPaid − creditedAmount), what its credit notes credit never exceeds its
 * total and is exactly its creditedAmount — and credit note numbers are gapless. The checks below
 * recompute everything from the records (an oracle of their own), not from the code under test.
 */
const NOW = "2026-11-22T09:30:00.000Z";
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

const times = <T>(n: number, f: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => f(i)));
const cents = (money: string): bigint => {
  const [whole, fraction = "00"] = money.replace("-", "").split(".");
  const value = BigInt(whole!) * 100n + BigInt(fraction.padEnd(2, "0"));
  return money.startsWith("-") ? -value : value;
};
const outcome = (r: TestResponse) => (r.status < 300 ? String(r.status) : `${r.status} ${r.body?.code}`);

async function world() {
  const user = await env.user();
  const clientId = ok(await user.call("POST", "/clients", { name: "Globex", email: "ap@globex.test" }), 201).body.id;
  return { user, clientId };
}

/** Every credit note number of the user is CN-000001 … CN-00000n: none skipped, none twice. */
async function expectGaplessNumbers(user: TestUser): Promise<number> {
  const notes = ok(await user.call("GET", "/credit-notes?limit=200")).body as {
    id: number;
    creditNoteNumber: string;
  }[];
  const numbers = notes.map((n) => n.creditNoteNumber).sort();
  expect(numbers).toEqual(notes.map((_, i) => `CN-${String(i + 1).padStart(6, "0")}`));
  for (const note of notes) expect(note.creditNoteNumber).toBe(`CN-${String(note.id).padStart(6, "0")}`);
  return notes.length;
}

/** The invariants of an invoice, its payments and its credit notes, from the records. */
async function expectConsistent(user: TestUser, invoiceId: number) {
  const invoice = ok(await user.call("GET", `/invoices/${invoiceId}`)).body;
  const notes = ok(await user.call("GET", `/invoices/${invoiceId}/credit-notes`)).body as any[];
  const payments = ok(await user.call("GET", `/invoices/${invoiceId}/payments`)).body as any[];
  const total = cents(invoice.total);
  const credited = notes.reduce((sum, n) => sum + cents(n.total), 0n);
  const paid = payments
    .filter((p) => p.status !== "needs_refund")
    .reduce((sum, p) => sum + cents(p.amount) - cents(p.refundedAmount), 0n);
  const due = total - paid - credited;
  expect(cents(invoice.creditedAmount)).toBe(credited);
  expect(credited <= total).toBe(true);
  expect(cents(invoice.amountPaid)).toBe(paid);
  expect(cents(invoice.amountDue)).toBe(due > 0n ? due : 0n);
  for (const note of notes) {
    expect(cents(note.total) > 0n).toBe(true);
    expect(cents(note.amountAppliedToDue) + cents(note.amountToRefund)).toBe(cents(note.total));
    expect(cents(note.amountToRefund) >= 0n).toBe(true);
  }
  // Σ amountAppliedToDue is what the credit notes took off: never more than was due without them.
  const applied = notes.reduce((sum, n) => sum + cents(n.amountAppliedToDue), 0n);
  expect(applied <= total).toBe(true);
  if (credited === total) expect(invoice.status).toBe("void");
  if (invoice.status === "void") expect(invoice.voidedAt).not.toBeNull();
  else expect(invoice.voidedAt).toBeNull();
  if (invoice.status === "paid") expect(invoice.amountDue).toBe("0.00");
  if (invoice.status === "sent" || invoice.status === "overdue") expect(cents(invoice.amountDue) > 0n).toBe(true);
  // The invoice item's bookkeeping never leaks into the resource.
  expect(invoice).not.toHaveProperty("creditNoteNumbers");
  expect(invoice).not.toHaveProperty("creditedQuantities");
  return { invoice, notes, payments };
}

describe("concurrent credit notes of one invoice", () => {
  it("10 concurrent full credit notes: exactly one 201, the rest invalid_transition (the invoice is void), no number skipped", async () => {
    const { user, clientId } = await world();
    const sent = await invoiceIn(env, user, clientId, "sent", LINES);
    const results = await times(10, () => user.call("POST", `/invoices/${sent.id}/credit-notes`, {}));
    const winners = results.filter((r) => r.status === 201);
    expect(winners, results.map(outcome).join(", ")).toHaveLength(1);
    for (const loser of results.filter((r) => r.status !== 201)) expectProblem(loser, 422, "invalid_transition");
    expect(winners[0]!.body).toMatchObject({ creditNoteNumber: "CN-000001", total: "1290.00" });
    const { invoice } = await expectConsistent(user, sent.id);
    expect(invoice).toMatchObject({ status: "void", creditedAmount: "1290.00" });
    // The losers consumed no number: the next credit note is CN-000002.
    const next = await invoiceIn(env, user, clientId, "sent", LINES);
    const second = ok(await user.call("POST", `/invoices/${next.id}/credit-notes`, {}), 201).body;
    expect(second.creditNoteNumber).toBe("CN-000002");
    expect(await expectGaplessNumbers(user)).toBe(2);
  });

  it("12 concurrent credit notes of one unit each of a 10-unit line: 10 issued, 2 credit_exceeds_invoice, numbers gapless", async () => {
    const { user, clientId } = await world();
    const sent = await invoiceIn(env, user, clientId, "sent", LINES);
    const results = await times(12, () =>
      user.call("POST", `/invoices/${sent.id}/credit-notes`, { lineItems: [{ invoiceLineId: 1, quantity: "1" }] }),
    );
    const issued = results.filter((r) => r.status === 201);
    expect(issued, results.map(outcome).join(", ")).toHaveLength(10);
    for (const loser of results.filter((r) => r.status !== 201)) expectProblem(loser, 422, "credit_exceeds_invoice");
    const { invoice } = await expectConsistent(user, sent.id);
    expect(invoice).toMatchObject({ status: "sent", creditedAmount: "1190.00", amountDue: "100.00" });
    expect(await expectGaplessNumbers(user)).toBe(10);
  });
});

describe("a credit note racing a payment, a void and the overdue job", () => {
  it("whichever wins, the invariants hold", async () => {
    const { user, clientId } = await world();
    const dueDate = new Date(Date.parse(NOW) - 86_400_000).toISOString();
    const outcomes = new Set<string>();
    for (let round = 0; round < 6; round++) {
      const sent = await invoiceIn(env, user, clientId, "sent", { ...LINES, dueDate });
      const id = sent.id as number;
      const post = (path: string, body?: unknown) => user.call("POST", `/invoices/${id}${path}`, body);
      const racers: Promise<unknown>[] = [
        post("/credit-notes", round % 2 === 0 ? {} : { lineItems: [{ invoiceLineId: 1, quantity: "5" }] }),
        post("/credit-notes", { lineItems: [{ invoiceLineId: 2 }] }),
        post("/payments", { amount: "300.00", paymentMethod: "bank_transfer" }),
        post("/payments", { amount: "700.00", paymentMethod: "cash" }),
        round % 3 === 0 ? post("/void") : post("/mark-paid", { paymentMethod: "check" }),
        jobs.overdue!(env.deps, env.clock.now),
      ];
      const settled = await Promise.all(racers);
      for (const res of settled.slice(0, 5) as TestResponse[]) {
        expect(
          [200, 201].includes(res.status) ||
            (res.status === 422 &&
              ["invalid_transition", "overpayment", "credit_exceeds_invoice"].includes(res.body?.code)),
          `${res.status} ${res.text.slice(0, 300)}`,
        ).toBe(true);
        outcomes.add(outcome(res));
      }
      const { invoice } = await expectConsistent(user, id);
      outcomes.add(invoice.status);
    }
    expect(await expectGaplessNumbers(user)).toBeGreaterThan(0);
    // The races went more than one way (a sanity check that they raced at all).
    expect(outcomes.size).toBeGreaterThan(2);
  }, 240_000); // above the suite default: five runs of concurrent writers on a loaded machine
});
