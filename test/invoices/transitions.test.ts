import { beforeAll, describe, expect, it } from "vitest";
import { createTestEnv, expectProblem, type TestEnv, type TestUser } from "../support/env";
import { invoiceIn, line, newClient, newInvoice, ok, type Status } from "./fixtures";

/** finalize, send, mark-paid, void, client references, tenancy. */

let env: TestEnv;
let alice: TestUser;
let acme: Awaited<ReturnType<typeof newClient>>;

const DAY = 86_400_000;
const at = (offsetMs: number) => new Date(env.clock.now.getTime() + offsetMs).toISOString();

beforeAll(async () => {
  env = await createTestEnv();
  alice = await env.user();
  acme = await newClient(alice, { name: "Acme", email: "billing@acme.test", paymentTermsDays: 10 });
});

describe("finalize", () => {
  it("defaults issueDate to now and dueDate to issueDate + the client's paymentTermsDays", async () => {
    const draft = await newInvoice(alice, { clientId: acme.id });
    const res = ok(await alice.call("POST", `/invoices/${draft.id}/finalize`));
    expect(res.body).toMatchObject({ status: "finalized", issueDate: at(0), dueDate: at(10 * DAY), updatedAt: at(0) });
    expect(res.body.invoiceNumber).toMatch(/^INV-\d{6}$/);
    expect(res.headers.get("etag")).toMatch(/^"/);
    // The amounts and the public token are what they were.
    for (const field of ["subtotal", "taxTotal", "total", "lineItems", "publicToken", "createdAt"])
      expect(res.body[field]).toEqual(draft[field]);
  });

  it("keeps given dates; a given issueDate moves the default dueDate with it", async () => {
    const issued = await newInvoice(alice, { clientId: acme.id, issueDate: "2026-11-01" });
    expect(ok(await alice.call("POST", `/invoices/${issued.id}/finalize`)).body).toMatchObject({
      issueDate: "2026-11-01T00:00:00.000Z",
      dueDate: "2026-11-11T00:00:00.000Z",
    });
    const both = await newInvoice(alice, {
      clientId: acme.id,
      issueDate: "2026-11-02",
      dueDate: "2027-01-31T17:00:00Z",
    });
    expect(ok(await alice.call("POST", `/invoices/${both.id}/finalize`)).body).toMatchObject({
      issueDate: "2026-11-02T00:00:00.000Z",
      dueDate: "2027-01-31T17:00:00.000Z",
    });
    const dueOnly = await newInvoice(alice, { clientId: acme.id, dueDate: "2026-12-24" });
    expect(ok(await alice.call("POST", `/invoices/${dueOnly.id}/finalize`)).body).toMatchObject({
      issueDate: at(0),
      dueDate: "2026-12-24T00:00:00.000Z",
    });
  });

  it("uses the client's terms and name as they are at finalize, then freezes them", async () => {
    const client = await newClient(alice, { name: "Old Name", email: "old@example.test", paymentTermsDays: 30 });
    const draft = await newInvoice(alice, { clientId: client.id });
    ok(
      await alice.call("PATCH", `/clients/${client.id}`, {
        name: "New Name",
        email: "new@example.test",
        paymentTermsDays: 0,
      }),
    );
    const finalized = ok(await alice.call("POST", `/invoices/${draft.id}/finalize`)).body;
    expect(finalized).toMatchObject({
      clientName: "New Name",
      clientEmail: "new@example.test",
      issueDate: at(0),
      dueDate: at(0),
    });
    ok(await alice.call("PATCH", `/clients/${client.id}`, { name: "Newer Name", email: null }));
    expect(ok(await alice.call("GET", `/invoices/${finalized.id}`)).body).toEqual(finalized);
    const sent = ok(await alice.call("POST", `/invoices/${draft.id}/send`)).body;
    expect(sent).toMatchObject({ clientName: "New Name", clientEmail: "new@example.test" });
  });

  it("needs a line (empty_invoice) and a total ≥ 0 (negative_total); a zero total is fine", async () => {
    const empty = await newInvoice(alice, { clientId: acme.id, lineItems: [] });
    expectProblem(await alice.call("POST", `/invoices/${empty.id}/finalize`), 422, "empty_invoice");
    const negative = await newInvoice(alice, {
      clientId: acme.id,
      lineItems: [line(), { description: "Credit", unitPrice: "-65.00" }],
    });
    expect(negative.total).toBe("-0.08");
    expectProblem(await alice.call("POST", `/invoices/${negative.id}/finalize`), 422, "negative_total");
    for (const id of [empty.id, negative.id])
      expect(ok(await alice.call("GET", `/invoices/${id}`)).body.status).toBe("draft");
    const zero = await newInvoice(alice, {
      clientId: acme.id,
      lineItems: [
        { description: "Item", unitPrice: "10" },
        { description: "Credit", unitPrice: "-10" },
      ],
    });
    expect(ok(await alice.call("POST", `/invoices/${zero.id}/finalize`)).body).toMatchObject({
      status: "finalized",
      total: "0.00",
    });
  });

  it("numbers per user, in finalization order, without gaps: deleted and voided drafts take no number", async () => {
    const bob = await env.user();
    const client = await newClient(bob);
    const drafts = [];
    for (let i = 0; i < 5; i++) drafts.push(await newInvoice(bob, { clientId: client.id }));
    const number = async (id: number) => ok(await bob.call("POST", `/invoices/${id}/finalize`)).body.invoiceNumber;

    expect(await number(drafts[2].id)).toBe("INV-000001"); // creation order does not matter
    expect((await bob.call("DELETE", `/invoices/${drafts[0].id}`)).status).toBe(204);
    const voided = ok(await bob.call("POST", `/invoices/${drafts[1].id}/void`)).body;
    expect(voided).toMatchObject({ status: "void", invoiceNumber: null });
    expectProblem(await bob.call("POST", `/invoices/${drafts[1].id}/finalize`), 422, "invalid_transition");
    expect(ok(await bob.call("GET", `/invoices/${drafts[1].id}`)).body.invoiceNumber).toBeNull();
    // A refused finalize takes no number either.
    const empty = await newInvoice(bob, { clientId: client.id, lineItems: [] });
    expectProblem(await bob.call("POST", `/invoices/${empty.id}/finalize`), 422, "empty_invoice");
    expect(await number(drafts[4].id)).toBe("INV-000002");
    expect(await number(drafts[3].id)).toBe("INV-000003");
    // A voided finalized invoice keeps its number, and the sequence goes on.
    expect(ok(await bob.call("POST", `/invoices/${drafts[3].id}/void`)).body.invoiceNumber).toBe("INV-000003");
    expect(await number((await newInvoice(bob, { clientId: client.id })).id)).toBe("INV-000004");

    // Another user's sequence is their own.
    const carol = await env.user();
    const carolsClient = await newClient(carol);
    const carols = await newInvoice(carol, { clientId: carolsClient.id });
    expect(ok(await carol.call("POST", `/invoices/${carols.id}/finalize`)).body.invoiceNumber).toBe("INV-000001");
  });

  it("only a draft can be finalized", async () => {
    for (const status of ["finalized", "sent", "paid", "overdue", "void"] as Status[]) {
      const invoice = await invoiceIn(env, alice, acme.id, status);
      expectProblem(await alice.call("POST", `/invoices/${invoice.id}/finalize`), 422, "invalid_transition");
      expect(ok(await alice.call("GET", `/invoices/${invoice.id}`)).body).toEqual(invoice);
    }
  });

  it("takes an empty body or {}, and nothing else", async () => {
    const draft = await newInvoice(alice, { clientId: acme.id });
    expectProblem(
      await alice.call("POST", `/invoices/${draft.id}/finalize`, { issueDate: "2026-11-01" }),
      400,
      "validation_error",
    );
    expectProblem(await alice.call("POST", `/invoices/${draft.id}/finalize`, []), 400, "validation_error");
    expect(ok(await alice.call("POST", `/invoices/${draft.id}/finalize`, {})).body.status).toBe("finalized");
  });
});

describe("send", () => {
  it("finalized → sent, sets sentAt, and keeps amounts, number and token", async () => {
    const finalized = await invoiceIn(env, alice, acme.id, "finalized");
    env.clock.advance(5_000);
    const sent = ok(await alice.call("POST", `/invoices/${finalized.id}/send`)).body;
    expect(sent).toMatchObject({ status: "sent", sentAt: at(0), updatedAt: at(0) });
    for (const field of ["invoiceNumber", "total", "lineItems", "publicToken", "issueDate", "dueDate"])
      expect(sent[field]).toEqual(finalized[field]);
    expectProblem(await alice.call("POST", `/invoices/${finalized.id}/send`), 422, "invalid_transition");
  });

  it("needs a recipient: `to`, else the client's email (client_email_missing)", async () => {
    const mute = await newClient(alice, { name: "No Mail", email: null });
    const finalized = await invoiceIn(env, alice, mute.id, "finalized");
    expectProblem(await alice.call("POST", `/invoices/${finalized.id}/send`), 422, "client_email_missing");
    expectProblem(await alice.call("POST", `/invoices/${finalized.id}/send`, {}), 422, "client_email_missing");
    expect(ok(await alice.call("GET", `/invoices/${finalized.id}`)).body).toEqual(finalized);

    expectProblem(
      await alice.call("POST", `/invoices/${finalized.id}/send`, { to: "not-an-email" }),
      400,
      "validation_error",
    );
    expectProblem(
      await alice.call("POST", `/invoices/${finalized.id}/send`, { to: "a@b.test", cc: "c@d.test" }),
      400,
      "validation_error",
    );
    const sent = ok(await alice.call("POST", `/invoices/${finalized.id}/send`, { to: "someone@mute.test" })).body;
    expect(sent).toMatchObject({ status: "sent", clientEmail: null });
    // `to` changes no client data.
    expect(ok(await alice.call("GET", `/clients/${mute.id}`)).body.email).toBeNull();
  });

  it("an email the client got after finalize counts as the client's email", async () => {
    const late = await newClient(alice, { name: "Late Mail", email: null });
    const finalized = await invoiceIn(env, alice, late.id, "finalized");
    ok(await alice.call("PATCH", `/clients/${late.id}`, { email: "late@example.test" }));
    expect(ok(await alice.call("POST", `/invoices/${finalized.id}/send`)).body.status).toBe("sent");
  });

  it("only a finalized invoice can be sent", async () => {
    for (const status of ["draft", "sent", "paid", "overdue", "void"] as Status[]) {
      const invoice = await invoiceIn(env, alice, acme.id, status);
      expectProblem(
        await alice.call("POST", `/invoices/${invoice.id}/send`, { to: "x@y.test" }),
        422,
        "invalid_transition",
      );
    }
  });
});

describe("mark-paid", () => {
  it("sent → paid with amountPaid = total, paidAt now, method and reference", async () => {
    const sent = await invoiceIn(env, alice, acme.id, "sent");
    const paid = ok(
      await alice.call("POST", `/invoices/${sent.id}/mark-paid`, {
        paymentMethod: "bank_transfer",
        reference: "SEPA-77",
      }),
    ).body;
    expect(paid).toMatchObject({
      status: "paid",
      amountPaid: sent.total,
      paidAt: at(0),
      paymentMethod: "bank_transfer",
      paymentReference: "SEPA-77",
    });
    expect(paid.total).toBe("64.92");
  });

  it("takes a past paidAt (normalized), and a null reference", async () => {
    const overdue = await invoiceIn(env, alice, acme.id, "overdue");
    const paid = ok(
      await alice.call("POST", `/invoices/${overdue.id}/mark-paid`, {
        paymentMethod: "check",
        paidAt: "2026-11-20T10:00:00+02:00",
        reference: null,
      }),
    ).body;
    expect(paid).toMatchObject({
      status: "paid",
      paidAt: "2026-11-20T08:00:00.000Z",
      paymentMethod: "check",
      paymentReference: null,
      amountPaid: overdue.total,
    });
    const sent = await invoiceIn(env, alice, acme.id, "sent");
    expect(
      ok(await alice.call("POST", `/invoices/${sent.id}/mark-paid`, { paymentMethod: "other", paidAt: at(0) })).body
        .paidAt,
    ).toBe(at(0));
  });

  it.each([
    [{}, "paymentMethod"],
    [undefined, "paymentMethod"],
    [{ paymentMethod: "card" }, "paymentMethod"],
    [{ paymentMethod: "CASH" }, "paymentMethod"],
    [{ paymentMethod: "bitcoin" }, "paymentMethod"],
    [{ paymentMethod: "cash", paidAt: "2026-02-30" }, "paidAt"],
    [{ paymentMethod: "cash", paidAt: "FUTURE+1s" }, "paidAt"],
    [{ paymentMethod: "cash", paidAt: "FUTURE+1d" }, "paidAt"],
    [{ paymentMethod: "cash", reference: "r".repeat(201) }, "reference"],
    [{ paymentMethod: "cash", amount: "1.00" }, "amount"],
  ])("400 for %j naming %s, nothing changed", async (template, path) => {
    const sent = await invoiceIn(env, alice, acme.id, "sent");
    const body =
      template && "paidAt" in template && String(template.paidAt).startsWith("FUTURE")
        ? { ...template, paidAt: at(template.paidAt === "FUTURE+1s" ? 1_000 : DAY) }
        : template;
    const problem = expectProblem(
      await alice.call("POST", `/invoices/${sent.id}/mark-paid`, body),
      400,
      "validation_error",
    );
    expect(problem.errors!.map((e) => e.path)).toEqual([path]);
    expect(ok(await alice.call("GET", `/invoices/${sent.id}`)).body).toEqual(sent);
  });

  it("only a sent or overdue invoice can be marked paid", async () => {
    for (const status of ["draft", "finalized", "paid", "void"] as Status[]) {
      const invoice = await invoiceIn(env, alice, acme.id, status);
      expectProblem(
        await alice.call("POST", `/invoices/${invoice.id}/mark-paid`, { paymentMethod: "cash" }),
        422,
        "invalid_transition",
      );
      expect(ok(await alice.call("GET", `/invoices/${invoice.id}`)).body).toEqual(invoice);
    }
  });
});

describe("void", () => {
  it.each<Status>(["draft", "finalized", "sent", "overdue", "paid"])(
    "voids a %s invoice, keeping its number",
    async (status) => {
      const invoice = await invoiceIn(env, alice, acme.id, status);
      env.clock.advance(1_000);
      const voided = ok(await alice.call("POST", `/invoices/${invoice.id}/void`)).body;
      expect(voided).toMatchObject({
        status: "void",
        invoiceNumber: invoice.invoiceNumber,
        total: invoice.total,
        updatedAt: at(0),
      });
      expectProblem(await alice.call("POST", `/invoices/${invoice.id}/void`), 422, "invalid_transition");
      // Void takes no further state change.
      expectProblem(await alice.call("POST", `/invoices/${invoice.id}/finalize`), 422, "invalid_transition");
      expectProblem(
        await alice.call("POST", `/invoices/${invoice.id}/send`, { to: "x@y.test" }),
        422,
        "invalid_transition",
      );
      expectProblem(
        await alice.call("POST", `/invoices/${invoice.id}/mark-paid`, { paymentMethod: "cash" }),
        422,
        "invalid_transition",
      );
      expect(ok(await alice.call("GET", `/invoices/${invoice.id}`)).body).toEqual(voided);
    },
  );

  it("takes no body fields", async () => {
    const draft = await newInvoice(alice, { clientId: acme.id });
    expectProblem(await alice.call("POST", `/invoices/${draft.id}/void`, { reason: "x" }), 400, "validation_error");
    expect(ok(await alice.call("GET", `/invoices/${draft.id}`)).body.status).toBe("draft");
  });
});

describe("client references", () => {
  it("a client with invoices is in use until its drafts are deleted", async () => {
    const client = await newClient(alice, { name: "Referenced" });
    const one = await newInvoice(alice, { clientId: client.id });
    const two = await newInvoice(alice, { clientId: client.id });
    expectProblem(await alice.call("DELETE", `/clients/${client.id}`), 422, "client_in_use");
    expect((await alice.call("DELETE", `/invoices/${one.id}`)).status).toBe(204);
    expectProblem(await alice.call("DELETE", `/clients/${client.id}`), 422, "client_in_use");
    expect((await alice.call("DELETE", `/invoices/${two.id}`)).status).toBe(204);
    expect((await alice.call("DELETE", `/clients/${client.id}`)).status).toBe(204);
    expectProblem(await alice.call("GET", `/clients/${client.id}`), 404, "not_found");
  });

  it("moving an invoice to another client moves the reference", async () => {
    const from = await newClient(alice, { name: "From" });
    const to = await newClient(alice, { name: "To" });
    const draft = await newInvoice(alice, { clientId: from.id });
    ok(await alice.call("PATCH", `/invoices/${draft.id}`, { clientId: to.id }));
    expectProblem(await alice.call("DELETE", `/clients/${to.id}`), 422, "client_in_use");
    expect((await alice.call("DELETE", `/clients/${from.id}`)).status).toBe(204);
  });

  it("finalized and void invoices keep their client in use", async () => {
    for (const status of ["finalized", "void"] as Status[]) {
      const client = await newClient(alice, { name: `Keeps ${status}` });
      await invoiceIn(env, alice, client.id, status);
      expectProblem(await alice.call("DELETE", `/clients/${client.id}`), 422, "client_in_use");
    }
  });
});

describe("tenancy", () => {
  it("another user's invoice is 404 on every endpoint and stays unchanged", async () => {
    const mallory = await env.user();
    const own = await newClient(mallory);
    for (const status of ["draft", "sent"] as Status[]) {
      const target = ok(await alice.call("POST", "/invoices", { clientId: acme.id, lineItems: [line()] }), 201);
      if (status === "sent") {
        ok(await alice.call("POST", `/invoices/${target.body.id}/finalize`));
        ok(await alice.call("POST", `/invoices/${target.body.id}/send`));
      }
      const before = ok(await alice.call("GET", `/invoices/${target.body.id}`));
      const path = `/invoices/${before.body.id}`;
      const attempts: [string, string, unknown][] = [
        ["GET", path, undefined],
        ["PATCH", path, { notes: "mine now" }],
        ["PATCH", path, {}],
        ["PATCH", path, { clientId: own.id }],
        ["DELETE", path, undefined],
        ["POST", `${path}/finalize`, undefined],
        ["POST", `${path}/send`, { to: "mallory@evil.test" }],
        ["POST", `${path}/mark-paid`, { paymentMethod: "cash" }],
        ["POST", `${path}/void`, undefined],
      ];
      for (const [method, url, body] of attempts) {
        expectProblem(await mallory.call(method, url, body), 404, "not_found");
      }
      const after = ok(await alice.call("GET", path));
      expect(after.body).toEqual(before.body);
      expect(after.headers.get("etag")).toBe(before.headers.get("etag"));
    }
    expect(ok(await mallory.call("GET", "/invoices")).body).toEqual([]);
    expect(ok(await mallory.call("GET", "/invoices?status=sent")).body).toEqual([]);
    expect(ok(await mallory.call("GET", `/invoices?clientId=${acme.id}`)).body).toEqual([]);
  });

  it("an unknown id is 404 on every endpoint", async () => {
    for (const [method, url, body] of [
      ["GET", "/invoices/987654", undefined],
      ["PATCH", "/invoices/987654", { notes: "x" }],
      ["DELETE", "/invoices/987654", undefined],
      ["POST", "/invoices/987654/finalize", undefined],
      ["POST", "/invoices/987654/send", undefined],
      ["POST", "/invoices/987654/mark-paid", { paymentMethod: "cash" }],
      ["POST", "/invoices/987654/void", undefined],
    ] as [string, string, unknown][]) {
      expectProblem(await alice.call(method, url, body), 404, "not_found");
    }
  });
});
