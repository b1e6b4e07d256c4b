import { attachMeter } from "../support/metering";
import { beforeAll, describe, expect, it } from "vitest";
import { createTestEnvWithClient, expectProblem, type TestEnv, type TestResponse, type TestUser } from "../support/env";
import { invoiceIn, line, newClient, newInvoice, ok } from "./fixtures";

/**
 * Concurrency: each transition happens at most once; N concurrent identical
 * actions on one invoice give exactly one 200 and N − 1 invalid_transition. Edits racing each other
 * or a finalize are never lost and never half-applied; client reference counts stay exact.
 */

let env: TestEnv;
let alice: TestUser;
let acme: number;

beforeAll(async () => {
  ({ env, user: alice, clientId: acme } = await createTestEnvWithClient());
});

const N = 20;
const times = <T>(n: number, f: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => f(i)));

function exactlyOneWinner(results: TestResponse[], status = 200): TestResponse {
  const winners = results.filter((r) => r.status === status);
  expect(winners, results.map((r) => `${r.status} ${r.body?.code ?? ""}`).join(", ")).toHaveLength(1);
  for (const loser of results.filter((r) => r.status !== status)) expectProblem(loser, 422, "invalid_transition");
  return winners[0]!;
}

describe("N concurrent identical transitions on one invoice", () => {
  it("finalize: one 200 taking one number, the rest invalid_transition", async () => {
    const bob = await env.user();
    const client = (await newClient(bob)).id;
    const draft = await newInvoice(bob, { clientId: client });
    const winner = exactlyOneWinner(await times(N, () => bob.call("POST", `/invoices/${draft.id}/finalize`)));
    expect(winner.body).toMatchObject({ status: "finalized", invoiceNumber: "INV-000001" });
    expect(ok(await bob.call("GET", `/invoices/${draft.id}`)).body).toEqual(winner.body);
    // The losers consumed no number.
    const next = await newInvoice(bob, { clientId: client });
    expect(ok(await bob.call("POST", `/invoices/${next.id}/finalize`)).body.invoiceNumber).toBe("INV-000002");
  });

  it("void: one 200, the rest invalid_transition", async () => {
    const sent = await invoiceIn(env, alice, acme, "sent");
    const winner = exactlyOneWinner(await times(N, () => alice.call("POST", `/invoices/${sent.id}/void`)));
    expect(winner.body).toMatchObject({ status: "void", invoiceNumber: sent.invoiceNumber });
    expect(ok(await alice.call("GET", `/invoices/${sent.id}`)).body).toEqual(winner.body);
  });

  it("void of a draft: one 200, and the draft still never gets a number", async () => {
    const draft = await newInvoice(alice, { clientId: acme });
    const winner = exactlyOneWinner(await times(N, () => alice.call("POST", `/invoices/${draft.id}/void`)));
    expect(winner.body).toMatchObject({ status: "void", invoiceNumber: null });
  });

  it("mark-paid of an overdue invoice: one 200, the rest invalid_transition", async () => {
    const overdue = await invoiceIn(env, alice, acme, "overdue");
    const winner = exactlyOneWinner(
      await times(N, (i) =>
        alice.call("POST", `/invoices/${overdue.id}/mark-paid`, { paymentMethod: "check", reference: `#${i}` }),
      ),
    );
    const stored = ok(await alice.call("GET", `/invoices/${overdue.id}`)).body;
    expect(stored).toEqual(winner.body);
    expect(stored).toMatchObject({ status: "paid", amountPaid: overdue.total });
  });

  it("send: one 200, the rest invalid_transition", async () => {
    const finalized = await invoiceIn(env, alice, acme, "finalized");
    const winner = exactlyOneWinner(
      await times(10, (i) => alice.call("POST", `/invoices/${finalized.id}/send`, { to: `r${i}@example.test` })),
    );
    expect(ok(await alice.call("GET", `/invoices/${finalized.id}`)).body).toEqual(winner.body);
  });
});

describe("edits racing", () => {
  const ORIGINAL = [line({ description: "Original", quantity: "1", unitPrice: "10.00", taxRate: "0.10" })];
  const PATCHED = [line({ description: "Patched", quantity: "2", unitPrice: "7.50", taxRate: "0.20" })];

  it("PATCH against finalize: the finalized invoice has all of the patch or none of it", async () => {
    const outcomes = { patchFirst: 0, finalizeFirst: 0 };
    for (let round = 0; round < 8; round++) {
      const draft = await newInvoice(alice, { clientId: acme, lineItems: ORIGINAL });
      const [patch, finalize] = await Promise.all([
        alice.call("PATCH", `/invoices/${draft.id}`, { lineItems: PATCHED, notes: "patched", dueDate: "2027-03-01" }),
        alice.call("POST", `/invoices/${draft.id}/finalize`),
      ]);
      ok(finalize);
      const stored = ok(await alice.call("GET", `/invoices/${draft.id}`)).body;
      expect(stored).toEqual(finalize.body);
      expect(stored.status).toBe("finalized");
      if (patch.status === 200) {
        outcomes.patchFirst++;
        // The finalize came after the edit, so it finalized the edited invoice, whole.
        expect(stored).toMatchObject({
          notes: "patched",
          dueDate: "2027-03-01T00:00:00.000Z",
          subtotal: "15.00",
          taxTotal: "3.00",
          total: "18.00",
        });
        expect(stored.lineItems.map((l: { description: string }) => l.description)).toEqual(["Patched"]);
        expect(stored.lineItems[0].id).toBe(2);
      } else {
        outcomes.finalizeFirst++;
        expectProblem(patch, 422, "invoice_not_editable");
        expect(stored).toMatchObject({ notes: null, subtotal: "10.00", taxTotal: "1.00", total: "11.00" });
        expect(stored.lineItems).toEqual(draft.lineItems);
        expect(stored.dueDate).not.toBe("2027-03-01T00:00:00.000Z");
      }
    }
    expect(outcomes.patchFirst + outcomes.finalizeFirst).toBe(8);
  });

  it("concurrent PATCHes without If-Match all apply: no edit is lost", async () => {
    const draft = await newInvoice(alice, { clientId: acme, lineItems: ORIGINAL });
    const patches = [
      { notes: "n" },
      { terms: "t" },
      { issueDate: "2026-12-01" },
      { dueDate: "2026-12-31" },
      { altProcessorPaymentLink: "https://pay.example/1" },
      { lineItems: PATCHED },
    ];
    const results = await Promise.all(patches.map((body) => alice.call("PATCH", `/invoices/${draft.id}`, body)));
    for (const res of results) ok(res);
    expect(ok(await alice.call("GET", `/invoices/${draft.id}`)).body).toMatchObject({
      notes: "n",
      terms: "t",
      issueDate: "2026-12-01T00:00:00.000Z",
      dueDate: "2026-12-31T00:00:00.000Z",
      altProcessorPaymentLink: "https://pay.example/1",
      total: "18.00",
    });
  });

  it("concurrent PATCHes with the same If-Match: one 200, the rest 412", async () => {
    const created = ok(await alice.call("POST", "/invoices", { clientId: acme }), 201);
    const etag = created.headers.get("etag")!;
    const results = await times(10, (i) =>
      alice.call("PATCH", `/invoices/${created.body.id}`, { notes: `edit ${i}` }, { "If-Match": etag }),
    );
    const winners = results.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    for (const loser of results.filter((r) => r.status !== 200)) expectProblem(loser, 412, "precondition_failed");
    expect(ok(await alice.call("GET", `/invoices/${created.body.id}`)).body.notes).toBe(winners[0]!.body.notes);
  });
});

describe("client references under concurrency", () => {
  it("concurrent DELETEs of a draft: one 204, the rest 404, and the count stays exact", async () => {
    const client = (await newClient(alice, { name: "Refs" })).id;
    const keep = await newInvoice(alice, { clientId: client });
    const draft = await newInvoice(alice, { clientId: client });
    const results = await times(10, () => alice.call("DELETE", `/invoices/${draft.id}`));
    expect(results.filter((r) => r.status === 204)).toHaveLength(1);
    for (const r of results.filter((r) => r.status !== 204)) expectProblem(r, 404, "not_found");
    // One invoice still names the client: had the count dropped twice, this delete would pass.
    expectProblem(await alice.call("DELETE", `/clients/${client}`), 422, "client_in_use");
    expect((await alice.call("DELETE", `/invoices/${keep.id}`)).status).toBe(204);
    expect((await alice.call("DELETE", `/clients/${client}`)).status).toBe(204);
  });

  it("DELETE against finalize: exactly one wins", async () => {
    for (let round = 0; round < 5; round++) {
      const client = (await newClient(alice, { name: `Race ${round}` })).id;
      const draft = await newInvoice(alice, { clientId: client });
      const [del, fin] = await Promise.all([
        alice.call("DELETE", `/invoices/${draft.id}`),
        alice.call("POST", `/invoices/${draft.id}/finalize`),
      ]);
      if (del.status === 204) {
        expectProblem(fin, 404, "not_found");
        expect((await alice.call("DELETE", `/clients/${client}`)).status).toBe(204);
      } else {
        expectProblem(del, 422, "invoice_not_editable");
        expect(ok(fin).body.status).toBe("finalized");
        expectProblem(await alice.call("DELETE", `/clients/${client}`), 422, "client_in_use");
      }
    }
  });

  it("concurrent moves between clients leave exactly the final client in use", async () => {
    const clients = [];
    for (let i = 0; i < 4; i++) clients.push((await newClient(alice, { name: `Move ${i}` })).id);
    const draft = await newInvoice(alice, { clientId: clients[0]! });
    const results = await Promise.all(
      clients.slice(1).map((clientId) => alice.call("PATCH", `/invoices/${draft.id}`, { clientId })),
    );
    for (const res of results) ok(res);
    const final = ok(await alice.call("GET", `/invoices/${draft.id}`)).body;
    expect(clients.slice(1)).toContain(final.clientId);
    for (const clientId of clients) {
      const res = await alice.call("DELETE", `/clients/${clientId}`);
      if (clientId === final.clientId) expectProblem(res, 422, "client_in_use");
      else expect(res.status).toBe(204);
    }
  });
});

describe("many finalizes of one user race for the number counter in the one loop", () => {
  const numbered = (n: number) => Array.from({ length: n }, (_, i) => `INV-${String(i + 1).padStart(6, "0")}`);

  it("N concurrent finalizes: gapless, and at most N(N+1)/2 transactions (a finalize loses only to one that committed)", async () => {
    const bob = await env.user();
    const client = (await newClient(bob)).id;
    const n = 12;
    const ids: number[] = [];
    for (let i = 0; i < n; i++) ids.push((await newInvoice(bob, { clientId: client })).id);
    const meter = attachMeter(env.deps.db.doc);
    let results: TestResponse[];
    try {
      results = await times(n, (i) => bob.call("POST", `/invoices/${ids[i]}/finalize`));
    } finally {
      meter.detach();
    }
    expect(results.map((r) => r.status)).toEqual(Array(n).fill(200));
    expect(results.map((r) => r.body.invoiceNumber).sort()).toEqual(numbered(n));
    // The k-th finalize to commit lost at most k − 1 rounds (each to a commit before it), so the
    // burst sends at most 1 + 2 + … + N transactions, and each round reads once (a batch and the
    // client). A loop that retried without reading again, or a commit() retrying inside a round,
    // would exceed it.
    const transactions = meter.byCommand.TransactWriteItemsCommand ?? 0;
    expect(transactions).toBeGreaterThanOrEqual(n);
    expect(transactions).toBeLessThanOrEqual((n * (n + 1)) / 2);
    expect(meter.byCommand.BatchGetItemCommand).toBe(2 * transactions);
  });
});
