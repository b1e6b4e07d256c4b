import { beforeAll, describe, expect, it } from "vitest";
import { createTestEnv, expectProblem, type TestEnv, type TestUser } from "../support/env";
import { widgetLine } from "../support/line-items";
import { line, newClient, newInvoice, ok } from "./fixtures";

/** POST /invoices and GET /invoices/{id}: defaults, the resource's shape, and input validation. */

let env: TestEnv;
let alice: TestUser;
let euroClient: Awaited<ReturnType<typeof newClient>>;

beforeAll(async () => {
  env = await createTestEnv();
  alice = await env.user();
  euroClient = await newClient(alice, {
    name: "Euro GmbH",
    email: "ap@euro.test",
    currency: "EUR",
    paymentTermsDays: 10,
  });
});

describe("create", () => {
  it("makes a draft with the client's currency, name and email, and every field present", async () => {
    const res = ok(await alice.call("POST", "/invoices", { clientId: euroClient.id }), 201);
    const invoice = res.body;
    expect(res.headers.get("location")).toBe(`/invoices/${invoice.id}`);
    expect(res.headers.get("etag")).toMatch(/^"[^"]+"$/);
    const now = env.clock.now.toISOString();
    // Every field of the resource, null where there is no value: the key check names a missing or extra one.
    const expected = {
      id: invoice.id,
      clientId: euroClient.id,
      invoiceNumber: null,
      status: "draft",
      currency: "EUR",
      subtotal: "0.00",
      taxTotal: "0.00",
      total: "0.00",
      amountPaid: "0.00",
      creditedAmount: "0.00",
      amountDue: "0.00",
      notes: null,
      terms: null,
      dueDate: null,
      issueDate: null,
      sentAt: null,
      paidAt: null,
      voidedAt: null,
      publicToken: invoice.publicToken,
      clientName: "Euro GmbH",
      clientEmail: "ap@euro.test",
      lineItems: [],
      cardProcessorPaymentLink: null,
      cardProcessorCheckoutSessionId: null,
      altProcessorPaymentLink: null,
      paymentMethod: null,
      paymentReference: null,
      peppolDelivery: null,
      recurringScheduleId: null,
      estimateId: null,
      taxBreakdown: [],
      taxExemptionReason: null,
      buyerReference: null,
      purchaseOrderReference: null,
      deliveryDate: null,
      clientAddress: null,
      clientTaxId: null,
      seller: null,
      createdAt: now,
      updatedAt: now,
    };
    expect(Object.keys(invoice).sort()).toEqual(Object.keys(expected).sort());
    expect(invoice).toEqual(expected);

    const read = ok(await alice.call("GET", `/invoices/${invoice.id}`));
    expect(read.body).toEqual(invoice);
    expect(read.headers.get("etag")).toBe(res.headers.get("etag"));
  });

  it("ids count per user from 1", async () => {
    const bob = await env.user();
    const client = await newClient(bob);
    expect((await newInvoice(bob, { clientId: client.id })).id).toBe(1);
    expect((await newInvoice(bob, { clientId: client.id })).id).toBe(2);
  });

  it("takes every create field, normalizing dates and decimals", async () => {
    const invoice = await newInvoice(alice, {
      clientId: euroClient.id,
      currency: "JPY",
      issueDate: "2026-12-01",
      dueDate: "2026-12-31T18:00:00.5-05:00",
      notes: "Thanks!\nSee you",
      terms: "Net 30",
      altProcessorPaymentLink: "https://pay.example.com/i/42?x=1",
      lineItems: [
        line({ quantity: 3, unitPrice: 19.99, taxRate: 0.0825 }),
        { description: "Discount", unitPrice: "-5" },
      ],
    });
    expect(invoice).toMatchObject({
      currency: "JPY", // all amounts keep two decimals whatever the currency
      issueDate: "2026-12-01T00:00:00.000Z",
      dueDate: "2026-12-31T23:00:00.500Z",
      notes: "Thanks!\nSee you",
      terms: "Net 30",
      altProcessorPaymentLink: "https://pay.example.com/i/42?x=1",
      subtotal: "54.97",
      taxTotal: "4.95",
      total: "59.92",
      lineItems: [
        widgetLine(),
        {
          id: 2,
          description: "Discount",
          quantity: "1.00",
          unitPrice: "-5.00",
          taxRate: "0.00",
          amount: "-5.00",
          sortOrder: 1,
        },
      ],
    });
  });

  it("gives each invoice its own URL-safe public token of at least 128 bits", async () => {
    const tokens = new Set<string>();
    for (let i = 0; i < 10; i++) {
      const { publicToken } = await newInvoice(alice, { clientId: euroClient.id });
      expect(publicToken).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(publicToken.length * 6).toBeGreaterThanOrEqual(128);
      tokens.add(publicToken);
    }
    expect(tokens.size).toBe(10);
  });

  it("copies a null email as null and a client's USD default", async () => {
    const plain = await newClient(alice, { name: "Plain", email: null });
    const invoice = await newInvoice(alice, { clientId: plain.id });
    expect(invoice).toMatchObject({ clientName: "Plain", clientEmail: null, currency: "USD" });
  });

  it("accepts every limit at its edge", async () => {
    const invoice = await newInvoice(alice, {
      clientId: euroClient.id,
      notes: "n".repeat(5000),
      terms: "t".repeat(5000),
      lineItems: [
        { description: "d".repeat(1000), quantity: "1000000", unitPrice: "999999999.99", taxRate: "1" },
        { description: "x", quantity: "0.01", unitPrice: "-999999999.99", taxRate: "0" },
        ...Array.from({ length: 98 }, () => ({ description: "y", unitPrice: 0 })),
      ],
    });
    expect(invoice.lineItems).toHaveLength(100);
    expect(invoice.lineItems[0]).toMatchObject({
      quantity: "1000000.00",
      unitPrice: "999999999.99",
      taxRate: "1.00",
      amount: "999999999990000.00",
    });
    expect(invoice.lineItems[1]).toMatchObject({ amount: "-10000000.00" });
    expect(invoice).toMatchObject({
      subtotal: "999999989990000.00",
      taxTotal: "999999999990000.00",
      total: "1999999989980000.00",
    });
    // Totals beyond the input limits still read back exactly (finalize compares the total with zero).
    const finalized = ok(await alice.call("POST", `/invoices/${invoice.id}/finalize`)).body;
    expect(finalized).toMatchObject({ status: "finalized", total: "1999999989980000.00" });
    const sent = ok(await alice.call("POST", `/invoices/${invoice.id}/send`)).body;
    const paid = ok(
      await alice.call("POST", `/invoices/${sent.id}/mark-paid`, { paymentMethod: "bank_transfer" }),
    ).body;
    expect(paid.amountPaid).toBe("1999999989980000.00");
  });

  it("422 client_not_found for a client the user does not have", async () => {
    const bob = await env.user();
    const bobsOnly = [await newClient(bob), await newClient(bob), await newClient(bob), await newClient(bob)];
    const carol = await env.user();
    await newClient(carol);
    // Carol's client 1 exists; bob's 2..4 are not hers, and 999 is nobody's.
    for (const clientId of [bobsOnly[3]!.id, 999]) {
      expectProblem(await carol.call("POST", "/invoices", { clientId }), 422, "client_not_found");
    }
    expect(ok(await carol.call("GET", "/invoices")).body).toEqual([]);
  });
});

describe("create validation: 400 validation_error naming the field, nothing created", () => {
  const long = (n: number) => "x".repeat(n);
  const cases: [string, Record<string, unknown> | unknown, string[]][] = [
    ["read-only status", { status: "paid" }, ["status"]],
    ["read-only id", { id: 5 }, ["id"]],
    ["read-only invoiceNumber", { invoiceNumber: "INV-000009" }, ["invoiceNumber"]],
    ["read-only total", { total: "1.00" }, ["total"]],
    ["unknown field", { colour: "red" }, ["colour"]],
    ["clientId as a string", { clientId: "1" }, ["clientId"]],
    ["clientId 0", { clientId: 0 }, ["clientId"]],
    ["clientId fractional", { clientId: 1.5 }, ["clientId"]],
    ["quantity with 3 decimals", { lineItems: [line({ quantity: "1.001" })] }, ["lineItems.0.quantity"]],
    ["quantity number with 3 decimals", { lineItems: [line({ quantity: 1.001 })] }, ["lineItems.0.quantity"]],
    ["quantity 0", { lineItems: [line({ quantity: "0" })] }, ["lineItems.0.quantity"]],
    ["quantity negative", { lineItems: [line({ quantity: -1 })] }, ["lineItems.0.quantity"]],
    ["quantity over 1000000", { lineItems: [line({ quantity: "1000000.01" })] }, ["lineItems.0.quantity"]],
    ["quantity not a number", { lineItems: [line({ quantity: "three" })] }, ["lineItems.0.quantity"]],
    ["unitPrice with 3 decimals", { lineItems: [line({ unitPrice: "19.999" })] }, ["lineItems.0.unitPrice"]],
    ["unitPrice number with 3 decimals", { lineItems: [line({ unitPrice: 0.125 })] }, ["lineItems.0.unitPrice"]],
    ["unitPrice too large", { lineItems: [line({ unitPrice: "1000000000.00" })] }, ["lineItems.0.unitPrice"]],
    ["unitPrice too small", { lineItems: [line({ unitPrice: -1000000000 })] }, ["lineItems.0.unitPrice"]],
    ["unitPrice missing", { lineItems: [{ description: "x" }] }, ["lineItems.0.unitPrice"]],
    ["unitPrice boolean", { lineItems: [line({ unitPrice: true })] }, ["lineItems.0.unitPrice"]],
    ["unitPrice exponent", { lineItems: [line({ unitPrice: "1e3" })] }, ["lineItems.0.unitPrice"]],
    ["taxRate with 7 decimals", { lineItems: [line({ taxRate: "0.0825001" })] }, ["lineItems.0.taxRate"]],
    ["taxRate above 1", { lineItems: [line({ taxRate: "1.01" })] }, ["lineItems.0.taxRate"]],
    ["taxRate negative", { lineItems: [line({ taxRate: -0.01 })] }, ["lineItems.0.taxRate"]],
    ["description empty", { lineItems: [line({ description: "" })] }, ["lineItems.0.description"]],
    ["description too long", { lineItems: [line({ description: long(1001) })] }, ["lineItems.0.description"]],
    ["description missing", { lineItems: [{ unitPrice: "1.00" }] }, ["lineItems.0.description"]],
    ["line id is read-only", { lineItems: [line({ id: 1 })] }, ["lineItems.0.id"]],
    ["line amount is read-only", { lineItems: [line({ amount: "59.97" })] }, ["lineItems.0.amount"]],
    ["error in the second line", { lineItems: [line(), line({ quantity: "0.001" })] }, ["lineItems.1.quantity"]],
    ["101 line items", { lineItems: Array.from({ length: 101 }, () => line()) }, ["lineItems"]],
    ["lineItems not an array", { lineItems: "none" }, ["lineItems"]],
    ["currency unknown", { currency: "XYZ" }, ["currency"]],
    ["currency lowercase", { currency: "usd" }, ["currency"]],
    ["currency too short", { currency: "US" }, ["currency"]],
    ["currency null", { currency: null }, ["currency"]],
    ["impossible issueDate", { issueDate: "2026-02-30" }, ["issueDate"]],
    ["dueDate without seconds", { dueDate: "2026-11-22T09:30Z" }, ["dueDate"]],
    ["dueDate without offset", { dueDate: "2026-11-22T09:30:00" }, ["dueDate"]],
    ["dueDate words", { dueDate: "tomorrow" }, ["dueDate"]],
    ["notes too long", { notes: long(5001) }, ["notes"]],
    ["terms too long", { terms: long(5001) }, ["terms"]],
    ["notes a number", { notes: 5 }, ["notes"]],
    [
      "altProcessorPaymentLink http",
      { altProcessorPaymentLink: "http://pay.example.com/x" },
      ["altProcessorPaymentLink"],
    ],
    ["altProcessorPaymentLink not a URL", { altProcessorPaymentLink: "pay here" }, ["altProcessorPaymentLink"]],
    [
      "altProcessorPaymentLink javascript",
      { altProcessorPaymentLink: "javascript:alert(1)" },
      ["altProcessorPaymentLink"],
    ],
  ];

  it.each(cases)("%s", async (_name, body, paths) => {
    const full = { clientId: euroClient.id, ...(body as object) };
    const problem = expectProblem(await alice.call("POST", "/invoices", full), 400, "validation_error");
    expect(problem.errors!.map((e) => e.path)).toEqual(paths);
    for (const error of problem.errors!) expect(error.message).toEqual(expect.any(String));
    expect(problem.status).toBe(400);
    expect(problem.type).toMatch(/^https?:\/\//);
    expect(problem.detail).toEqual(expect.any(String));
  });

  it("reports every bad field at once", async () => {
    const problem = expectProblem(
      await alice.call("POST", "/invoices", {
        clientId: "x",
        currency: "usd",
        lineItems: [{ description: "", unitPrice: "1.001" }],
      }),
      400,
      "validation_error",
    );
    expect(problem.errors!.map((e) => e.path).sort()).toEqual([
      "clientId",
      "currency",
      "lineItems.0.description",
      "lineItems.0.unitPrice",
    ]);
  });

  it.each([
    ["no body", undefined],
    ["an array", []],
    ["null", null],
    ["a string", "hello"],
  ])("a body that is not an object (%s) is 400 on the body as a whole or clientId", async (_name, body) => {
    const res = await alice.call("POST", "/invoices", body === undefined ? undefined : JSON.stringify(body));
    const problem = expectProblem(res, 400, "validation_error");
    expect(problem.errors!.length).toBeGreaterThan(0);
    for (const error of problem.errors!) expect(["", "clientId"]).toContain(error.path);
  });

  it("malformed JSON is malformed_json, a non-JSON type 415", async () => {
    expectProblem(await alice.call("POST", "/invoices", "{not json"), 400, "malformed_json");
    expectProblem(
      await alice.call("POST", "/invoices", "clientId=1", { "Content-Type": "application/x-www-form-urlencoded" }),
      415,
      "unsupported_media_type",
    );
  });

  it("error precedence on the invoice routes: 401 → 405 → 413 → 415 → 400", async () => {
    const anonymous = await env.app.request("http://localhost/invoices/999999", { method: "PUT" });
    expect(anonymous.status).toBe(401);
    const wrongMethod = await alice.call("PUT", "/invoices/1", "not json", { "Content-Type": "text/plain" });
    expectProblem(wrongMethod, 405, "method_not_allowed");
    expect(wrongMethod.headers.get("allow")).toMatch(/PATCH/);
    const huge = JSON.stringify({ clientId: euroClient.id, notes: "x".repeat(300 * 1024) });
    expectProblem(await alice.call("POST", "/invoices", huge), 413, "payload_too_large");
    expectProblem(
      await alice.call("POST", "/invoices", huge, { "Content-Type": "text/plain" }),
      413,
      "payload_too_large",
    );
    expectProblem(await alice.call("PATCH", "/invoices/abc", huge), 413, "payload_too_large");
    expectProblem(
      await alice.call("POST", "/invoices/abc/finalize", "{}", { "Content-Type": "text/plain" }),
      415,
      "unsupported_media_type",
    );
    expectProblem(await alice.call("POST", "/invoices/abc/finalize"), 400, "validation_error");
  });

  it("none of the refused requests created anything", async () => {
    const dave = await env.user();
    const client = await newClient(dave);
    for (const [, body] of cases.slice(0, 12)) {
      expect((await dave.call("POST", "/invoices", { clientId: client.id, ...(body as object) })).status).toBe(400);
    }
    expect(ok(await dave.call("GET", "/invoices")).body).toEqual([]);
    // The next invoice is still number 1 of this user: refused requests took no id either.
    expect((await newInvoice(dave, { clientId: client.id })).id).toBe(1);
  });
});
