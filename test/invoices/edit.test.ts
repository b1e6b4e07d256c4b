import { beforeAll, describe, expect, it } from "vitest";
import { createTestEnv, expectProblem, type TestEnv, type TestUser } from "../support/env";
import { WIDGET_TOTALS, widgetLine } from "../support/line-items";
import { invoiceIn, line, newClient, newInvoice, ok, type Status } from "./fixtures";

/** PATCH and DELETE /invoices/{id} (If-Match and error order from section 1). */

let env: TestEnv;
let alice: TestUser;
let acme: Awaited<ReturnType<typeof newClient>>;
let globex: Awaited<ReturnType<typeof newClient>>;

beforeAll(async () => {
  env = await createTestEnv();
  alice = await env.user();
  acme = await newClient(alice, { name: "Acme", email: "billing@acme.test", currency: "USD" });
  globex = await newClient(alice, { name: "Globex", email: "ap@globex.test", currency: "GBP" });
});

const tick = () => env.clock.advance(60_000);

describe("PATCH /invoices/{id}", () => {
  it("sets fields, and null clears every nullable one", async () => {
    const draft = await newInvoice(alice, { clientId: acme.id });
    tick();
    const set = ok(
      await alice.call("PATCH", `/invoices/${draft.id}`, {
        notes: "n",
        terms: "t",
        issueDate: "2026-12-01",
        dueDate: "2026-12-15T12:00:00+01:00",
        altProcessorPaymentLink: "https://pay.example/x",
        currency: "CHF",
      }),
    );
    expect(set.body).toMatchObject({
      notes: "n",
      terms: "t",
      issueDate: "2026-12-01T00:00:00.000Z",
      dueDate: "2026-12-15T11:00:00.000Z",
      altProcessorPaymentLink: "https://pay.example/x",
      currency: "CHF",
      updatedAt: env.clock.now.toISOString(),
      createdAt: draft.createdAt,
    });
    tick();
    const cleared = ok(
      await alice.call("PATCH", `/invoices/${draft.id}`, {
        notes: null,
        terms: null,
        issueDate: null,
        dueDate: null,
        altProcessorPaymentLink: null,
      }),
    );
    expect(cleared.body).toMatchObject({
      notes: null,
      terms: null,
      issueDate: null,
      dueDate: null,
      altProcessorPaymentLink: null,
      currency: "CHF",
    });
    // Lines untouched by a PATCH without lineItems.
    expect(cleared.body.lineItems).toEqual(draft.lineItems);
    expect(cleared.body.total).toBe(draft.total);
  });

  it.each([
    [{ currency: null }, "currency"],
    [{ clientId: null }, "clientId"],
    [{ status: "paid" }, "status"],
    [{ invoiceNumber: "INV-000001" }, "invoiceNumber"],
    [{ id: 2 }, "id"],
    [{ amountPaid: "1.00" }, "amountPaid"],
    [{ publicToken: "x" }, "publicToken"],
    [{ lineItems: [line({ quantity: "2.345" })] }, "lineItems.0.quantity"],
    [{ lineItems: [line(), line({ unitPrice: "1e9" })] }, "lineItems.1.unitPrice"],
    [{ dueDate: "2026-02-29" }, "dueDate"],
    [{ altProcessorPaymentLink: "http://insecure.example" }, "altProcessorPaymentLink"],
  ])("400 for %j naming %s, nothing changed", async (body, path) => {
    const draft = await newInvoice(alice, { clientId: acme.id });
    const problem = expectProblem(await alice.call("PATCH", `/invoices/${draft.id}`, body), 400, "validation_error");
    expect(problem.errors!.map((e) => e.path)).toEqual([path]);
    expect(ok(await alice.call("GET", `/invoices/${draft.id}`)).body).toEqual(draft);
  });

  it("a body that is not an object is 400, not an empty patch", async () => {
    const draft = await newInvoice(alice, { clientId: acme.id });
    for (const body of ["[]", "null", "3"]) {
      expectProblem(await alice.call("PATCH", `/invoices/${draft.id}`, body), 400, "validation_error");
    }
  });

  it("lineItems replaces all lines with new ids, never reusing one", async () => {
    const draft = await newInvoice(alice, {
      clientId: acme.id,
      lineItems: [line(), line({ description: "Gadget", unitPrice: "5.00", taxRate: "0" })],
    });
    expect(draft.lineItems.map((l: { id: number }) => l.id)).toEqual([1, 2]);

    const first = ok(
      await alice.call("PATCH", `/invoices/${draft.id}`, {
        lineItems: [
          line({ quantity: "1" }),
          line({ quantity: "2" }),
          line({ description: "Fee", quantity: "1", unitPrice: "0.10", taxRate: "0.05" }),
        ],
      }),
    ).body;
    expect(first.lineItems.map((l: { id: number; sortOrder: number }) => [l.id, l.sortOrder])).toEqual([
      [3, 0],
      [4, 1],
      [5, 2],
    ]);
    // 19.99 + 39.98 + 0.10; tax 1.65 (1.649175) + 3.30 (3.29835) + 0.01 (0.005)
    expect(first).toMatchObject({ subtotal: "60.07", taxTotal: "4.96", total: "65.03" });

    const second = ok(
      await alice.call("PATCH", `/invoices/${draft.id}`, { lineItems: [line({ description: "Only" })] }),
    ).body;
    expect(second.lineItems).toEqual([widgetLine({ id: 6, description: "Only" })]);
    expect(second).toMatchObject(WIDGET_TOTALS);

    const emptied = ok(await alice.call("PATCH", `/invoices/${draft.id}`, { lineItems: [] })).body;
    expect(emptied).toMatchObject({ lineItems: [], subtotal: "0.00", taxTotal: "0.00", total: "0.00" });

    // Even after the lines with the highest ids are gone, new ones go above them.
    const third = ok(await alice.call("PATCH", `/invoices/${draft.id}`, { lineItems: [line(), line()] })).body;
    expect(third.lineItems.map((l: { id: number }) => l.id)).toEqual([7, 8]);
    expect(ok(await alice.call("GET", `/invoices/${draft.id}`)).body.lineItems).toEqual(third.lineItems);
  });

  it("a new clientId refreshes clientName and clientEmail but not currency", async () => {
    const draft = await newInvoice(alice, { clientId: acme.id });
    expect(draft).toMatchObject({ currency: "USD", clientName: "Acme", clientEmail: "billing@acme.test" });
    const moved = ok(await alice.call("PATCH", `/invoices/${draft.id}`, { clientId: globex.id })).body;
    expect(moved).toMatchObject({
      clientId: globex.id,
      clientName: "Globex",
      clientEmail: "ap@globex.test",
      currency: "USD",
    });
    expectProblem(await alice.call("PATCH", `/invoices/${draft.id}`, { clientId: 999 }), 422, "client_not_found");
    expect(ok(await alice.call("GET", `/invoices/${draft.id}`)).body).toEqual(moved);
  });

  it("{} changes nothing: same body, same updatedAt, same ETag", async () => {
    const draft = ok(await alice.call("POST", "/invoices", { clientId: acme.id, lineItems: [line()] }), 201);
    tick();
    const res = ok(await alice.call("PATCH", `/invoices/${draft.body.id}`, {}));
    expect(res.body).toEqual(draft.body);
    expect(res.headers.get("etag")).toBe(draft.headers.get("etag"));
    const withIfMatch = ok(
      await alice.call("PATCH", `/invoices/${draft.body.id}`, {}, { "If-Match": draft.headers.get("etag")! }),
    );
    expect(withIfMatch.body).toEqual(draft.body);
    const read = ok(await alice.call("GET", `/invoices/${draft.body.id}`));
    expect(read.body.updatedAt).toBe(draft.body.createdAt);
    expect(read.headers.get("etag")).toBe(draft.headers.get("etag"));
  });

  it("honors If-Match: a stale ETag is 412 and changes nothing", async () => {
    const created = ok(await alice.call("POST", "/invoices", { clientId: acme.id }), 201);
    const id = created.body.id;
    const etag1 = created.headers.get("etag")!;
    const changed = ok(await alice.call("PATCH", `/invoices/${id}`, { notes: "v2" }, { "If-Match": etag1 }));
    const etag2 = changed.headers.get("etag")!;
    expect(etag2).not.toBe(etag1);
    expect(ok(await alice.call("GET", `/invoices/${id}`)).headers.get("etag")).toBe(etag2);

    for (const stale of [etag1, `W/${etag2}`, '"nope"', "garbage"]) {
      expectProblem(
        await alice.call("PATCH", `/invoices/${id}`, { notes: "lost" }, { "If-Match": stale }),
        412,
        "precondition_failed",
      );
      expectProblem(
        await alice.call("PATCH", `/invoices/${id}`, {}, { "If-Match": stale }),
        412,
        "precondition_failed",
      );
    }
    expect(ok(await alice.call("GET", `/invoices/${id}`)).body.notes).toBe("v2");
    expect(
      ok(await alice.call("PATCH", `/invoices/${id}`, { notes: "v3" }, { "If-Match": `"x", ${etag2}` })).body.notes,
    ).toBe("v3");
    expect(ok(await alice.call("PATCH", `/invoices/${id}`, { notes: "v4" }, { "If-Match": "*" })).body.notes).toBe(
      "v4",
    );
  });

  it("errors come in the order 400 → 404 → 412 → 422", async () => {
    // 400 before 404: a bad body on an unknown id.
    expectProblem(await alice.call("PATCH", "/invoices/9999", { status: "paid" }), 400, "validation_error");
    expectProblem(await alice.call("PATCH", "/invoices/abc", { notes: "x" }), 400, "validation_error");
    // 415 and malformed JSON before a bad path id.
    expectProblem(
      await alice.call("PATCH", "/invoices/abc", "notes=x", { "Content-Type": "text/plain" }),
      415,
      "unsupported_media_type",
    );
    expectProblem(await alice.call("PATCH", "/invoices/abc", "{oops"), 400, "malformed_json");
    // 404 before 412.
    expectProblem(await alice.call("PATCH", "/invoices/9999", { notes: "x" }, { "If-Match": '"1"' }), 404, "not_found");
    // 412 before 422 (not editable, unknown client).
    const finalized = ok(await alice.call("POST", "/invoices", { clientId: acme.id, lineItems: [line()] }), 201);
    const done = ok(await alice.call("POST", `/invoices/${finalized.body.id}/finalize`));
    expectProblem(
      await alice.call(
        "PATCH",
        `/invoices/${finalized.body.id}`,
        { notes: "x" },
        { "If-Match": finalized.headers.get("etag")! },
      ),
      412,
      "precondition_failed",
    );
    expectProblem(
      await alice.call(
        "PATCH",
        `/invoices/${finalized.body.id}`,
        { notes: "x" },
        { "If-Match": done.headers.get("etag")! },
      ),
      422,
      "invoice_not_editable",
    );
    const draft = ok(await alice.call("POST", "/invoices", { clientId: acme.id }), 201);
    expectProblem(
      await alice.call("PATCH", `/invoices/${draft.body.id}`, { clientId: 999 }, { "If-Match": '"999"' }),
      412,
      "precondition_failed",
    );
    expectProblem(
      await alice.call(
        "PATCH",
        `/invoices/${draft.body.id}`,
        { clientId: 999 },
        { "If-Match": draft.headers.get("etag")! },
      ),
      422,
      "client_not_found",
    );
  });

  it.each<Status>(["finalized", "sent", "paid", "overdue", "void"])(
    "a %s invoice is not editable, {} included",
    async (status) => {
      const invoice = await invoiceIn(env, alice, acme.id, status);
      expectProblem(await alice.call("PATCH", `/invoices/${invoice.id}`, { notes: "x" }), 422, "invoice_not_editable");
      expectProblem(await alice.call("PATCH", `/invoices/${invoice.id}`, {}), 422, "invoice_not_editable");
      expectProblem(
        await alice.call("PATCH", `/invoices/${invoice.id}`, { lineItems: [] }),
        422,
        "invoice_not_editable",
      );
      expect(ok(await alice.call("GET", `/invoices/${invoice.id}`)).body).toEqual(invoice);
    },
  );
});

describe("DELETE /invoices/{id}", () => {
  it("deletes a draft: 204 without a body, then 404", async () => {
    const draft = await newInvoice(alice, { clientId: acme.id });
    const res = await alice.call("DELETE", `/invoices/${draft.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expectProblem(await alice.call("GET", `/invoices/${draft.id}`), 404, "not_found");
    expectProblem(await alice.call("DELETE", `/invoices/${draft.id}`), 404, "not_found");
    expectProblem(await alice.call("PATCH", `/invoices/${draft.id}`, {}), 404, "not_found");
    expect(ok(await alice.call("GET", "/invoices")).body.map((i: { id: number }) => i.id)).not.toContain(draft.id);
  });

  it.each<Status>(["finalized", "sent", "paid", "overdue", "void"])(
    "a %s invoice cannot be deleted",
    async (status) => {
      const invoice = await invoiceIn(env, alice, acme.id, status);
      expectProblem(await alice.call("DELETE", `/invoices/${invoice.id}`), 422, "invoice_not_editable");
      expect(ok(await alice.call("GET", `/invoices/${invoice.id}`)).body).toEqual(invoice);
    },
  );

  it("a bad id is 400, an unknown one 404", async () => {
    expectProblem(await alice.call("DELETE", "/invoices/0"), 400, "validation_error");
    expectProblem(await alice.call("DELETE", "/invoices/1.5"), 400, "validation_error");
    expectProblem(await alice.call("DELETE", "/invoices/424242"), 404, "not_found");
  });
});
