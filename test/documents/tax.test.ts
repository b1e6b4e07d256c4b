import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import {
  buildLineItems,
  computeTotals,
  taxBreakdown,
  TAX_CATEGORIES,
  type LineItemInput,
} from "@invoicing/core/documents/line-items";
import { centsOf } from "@invoicing/core/money/money";
import { FRENCH_CLIENT } from "../support/documents";
import { createTestEnv, expectProblem, type TestEnv, type TestUser } from "../support/env";

let env: TestEnv;
let alice: TestUser;
let clientId: number;

const PROFILE = {
  businessName: "Northwind Studio",
  legalName: "Northwind Studio GmbH",
  address: { line1: "Torstraße 1", city: "Berlin", postalCode: "10119", country: "DE" },
  taxId: "DE123456789",
  email: "billing@northwind.test",
  bankAccount: { accountName: "Northwind Studio GmbH", iban: "DE89370400440532013000", bic: "COBADEFFXXX" },
  defaultNotes: "Thanks!",
  defaultTerms: "Net 14",
};

beforeAll(async () => {
  env = await createTestEnv();
  alice = await env.user();
  expect((await alice.call("PATCH", "/profile", PROFILE)).status).toBe(200);
  clientId = (await alice.call("POST", "/clients", FRENCH_CLIENT)).body.id;
});

const mixed = [
  { description: "Design", quantity: "32", unitPrice: "120.00", taxRate: "0.19" },
  { description: "Books", quantity: "2", unitPrice: "35.00", taxRate: "0.07" },
  { description: "Hosting", unitPrice: "100.00", taxRate: "0.19", taxCategory: "standard" },
  { description: "Postage", unitPrice: "4.80" },
];

describe("tax categories and the breakdown", () => {
  it("defaults each line's category from its rate and breaks tax down by (category, rate)", async () => {
    const res = await alice.call("POST", "/invoices", { clientId, lineItems: mixed });
    expect(res.status).toBe(201);
    expect(res.body.lineItems.map((l: { taxCategory: string }) => l.taxCategory)).toEqual([
      "standard",
      "standard",
      "standard",
      "zero_rated",
    ]);
    expect(res.body.taxBreakdown).toEqual([
      { taxCategory: "standard", taxRate: "0.19", taxableAmount: "3940.00", taxAmount: "748.60" },
      { taxCategory: "standard", taxRate: "0.07", taxableAmount: "70.00", taxAmount: "4.90" },
      { taxCategory: "zero_rated", taxRate: "0.00", taxableAmount: "4.80", taxAmount: "0.00" },
    ]);
    expect(res.body).toMatchObject({ subtotal: "4014.80", taxTotal: "753.50", total: "4768.30" });
    const empty = await alice.call("POST", "/invoices", { clientId });
    expect(empty.body.taxBreakdown).toEqual([]);
  });

  it("refuses a category that disagrees with the rate, on the line's taxCategory", async () => {
    for (const line of [
      { description: "x", unitPrice: "1.00", taxRate: "0", taxCategory: "standard" },
      { description: "x", unitPrice: "1.00", taxCategory: "standard" },
      { description: "x", unitPrice: "1.00", taxRate: "0.19", taxCategory: "reverse_charge" },
      { description: "x", unitPrice: "1.00", taxRate: "0.07", taxCategory: "zero_rated" },
      { description: "x", unitPrice: "1.00", taxCategory: "VAT" },
    ]) {
      const problem = expectProblem(
        await alice.call("POST", "/invoices", { clientId, lineItems: [mixed[0], line] }),
        400,
        "validation_error",
      );
      expect(
        problem.errors!.map((e) => e.path),
        JSON.stringify(line),
      ).toEqual(["lineItems.1.taxCategory"]);
    }
    const est = expectProblem(
      await alice.call("POST", "/estimates", {
        clientId,
        lineItems: [{ description: "x", unitPrice: "1", taxRate: "0.2", taxCategory: "export" }],
      }),
      400,
      "validation_error",
    );
    expect(est.errors![0]!.path).toBe("lineItems.0.taxCategory");
  });

  it("needs taxExemptionReason to finalize an invoice or send an estimate with an exempt-like line (422)", async () => {
    const lines = [mixed[0], { description: "EU service", unitPrice: "500.00", taxCategory: "reverse_charge" }];
    const inv = (await alice.call("POST", "/invoices", { clientId, lineItems: lines })).body;
    expectProblem(await alice.call("POST", `/invoices/${inv.id}/finalize`), 422, "tax_exemption_reason_required");
    expect((await alice.call("GET", `/invoices/${inv.id}`)).body.status).toBe("draft");
    await alice.call("PATCH", `/invoices/${inv.id}`, {
      taxExemptionReason: "Reverse charge: the recipient owes the VAT (Art. 196 VAT Directive)",
    });
    const fin = await alice.call("POST", `/invoices/${inv.id}/finalize`);
    expect(fin.status).toBe(200);
    expect(fin.body.taxBreakdown.map((e: { taxCategory: string }) => e.taxCategory)).toEqual([
      "standard",
      "reverse_charge",
    ]);

    const est = (
      await alice.call("POST", "/estimates", {
        clientId,
        lineItems: [{ description: "Export", unitPrice: "10", taxCategory: "export" }],
      })
    ).body;
    expectProblem(await alice.call("POST", `/estimates/${est.id}/send`), 422, "tax_exemption_reason_required");
    await alice.call("PATCH", `/estimates/${est.id}`, { taxExemptionReason: "Export outside the EU" });
    const sent = await alice.call("POST", `/estimates/${est.id}/send`);
    expect(sent.status).toBe(200);
    // convert carries the reason and the categories
    const converted = await alice.call("POST", `/estimates/${est.id}/convert`);
    expect(converted.status).toBe(201);
    expect(converted.body.taxExemptionReason).toBe("Export outside the EU");
    expect(converted.body.lineItems[0].taxCategory).toBe("export");
    expect(converted.body.clientTaxId).toBe("FR40303265045");
  });

  it("entries add up exactly to subtotal and taxTotal (property)", () => {
    const line = fc.record({
      description: fc.constant("x"),
      quantity: fc.integer({ min: 1, max: 100_000_000 }).map((h) => (h / 100).toFixed(2)),
      unitPrice: fc.bigInt({ min: -99_999_999_999n, max: 99_999_999_999n }).map((c) => {
        const sign = c < 0n ? "-" : "";
        const a = c < 0n ? -c : c;
        return `${sign}${a / 100n}.${String(a % 100n).padStart(2, "0")}`;
      }),
      taxRate: fc.constantFrom("0", "0.07", "0.19", "0.0825", "0.09975", "0.2", "1"),
    });
    fc.assert(
      fc.property(fc.array(line, { maxLength: 100 }), (inputs) => {
        const lines = buildLineItems(inputs as LineItemInput[], 1);
        const totals = computeTotals(lines);
        const breakdown = taxBreakdown(lines);
        const sum = (f: "taxableAmount" | "taxAmount") => breakdown.reduce((s, e) => s + centsOf(e[f]), 0n);
        expect(sum("taxableAmount")).toBe(centsOf(totals.subtotal));
        expect(sum("taxAmount")).toBe(centsOf(totals.taxTotal));
        const keys = breakdown.map((e) => `${e.taxCategory}|${e.taxRate}`);
        expect(new Set(keys).size).toBe(keys.length);
        for (let i = 1; i < breakdown.length; i++) {
          const [a, b] = [breakdown[i - 1]!, breakdown[i]!];
          expect(
            Number(a.taxRate) > Number(b.taxRate) || (a.taxRate === b.taxRate && a.taxCategory < b.taxCategory),
          ).toBe(true);
        }
        expect(breakdown.every((e) => TAX_CATEGORIES.includes(e.taxCategory))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});

describe("new fields and snapshots", () => {
  it("takes references and a delivery date while draft, validates them, and defaults notes/terms from the profile", async () => {
    const res = await alice.call("POST", "/invoices", {
      clientId,
      buyerReference: "04011000-12345-03",
      purchaseOrderReference: "PO-7781",
      deliveryDate: "2026-11-20",
      lineItems: [mixed[0]],
    });
    expect(res.body).toMatchObject({
      buyerReference: "04011000-12345-03",
      purchaseOrderReference: "PO-7781",
      deliveryDate: "2026-11-20",
      notes: "Thanks!",
      terms: "Net 14",
      seller: null,
      taxExemptionReason: null,
      clientAddress: { ...FRENCH_CLIENT.address, line2: null, region: null },
      clientTaxId: FRENCH_CLIENT.taxId,
    });
    const explicitNull = await alice.call("POST", "/invoices", { clientId, notes: null, terms: null });
    expect(explicitNull.body).toMatchObject({ notes: null, terms: null });
    const est = await alice.call("POST", "/estimates", { clientId });
    expect(est.body).toMatchObject({
      notes: "Thanks!",
      terms: "Net 14",
      seller: null,
      clientTaxId: "FR40303265045",
      taxBreakdown: [],
    });
    for (const [body, path] of [
      [{ deliveryDate: "2026-02-30" }, "deliveryDate"],
      [{ deliveryDate: "2026-11-20T10:00:00Z" }, "deliveryDate"],
      [{ buyerReference: "x".repeat(201) }, "buyerReference"],
      [{ purchaseOrderReference: 7 }, "purchaseOrderReference"],
      [{ taxExemptionReason: "x".repeat(501) }, "taxExemptionReason"],
    ] as const) {
      const problem = expectProblem(
        await alice.call("PATCH", `/invoices/${res.body.id}`, body),
        400,
        "validation_error",
      );
      expect(problem.errors!.map((e) => e.path)).toEqual([path]);
    }
    const patched = await alice.call("PATCH", `/invoices/${res.body.id}`, {
      deliveryDate: null,
      buyerReference: "B-1",
    });
    expect(patched.body).toMatchObject({ deliveryDate: null, buyerReference: "B-1" });
  });

  it("freezes seller and client copies at finalize (invoices) and send (estimates)", async () => {
    const bob = await env.user();
    await bob.call("PATCH", "/profile", PROFILE);
    const cid = (await bob.call("POST", "/clients", FRENCH_CLIENT)).body.id;
    const inv = (await bob.call("POST", "/invoices", { clientId: cid, lineItems: [mixed[0]] })).body;
    const est = (await bob.call("POST", "/estimates", { clientId: cid, lineItems: [mixed[0]] })).body;
    // Edits before issuing are picked up…
    await bob.call("PATCH", `/clients/${cid}`, { taxId: "FR00000000000", address: { city: "Lyon", country: "FR" } });
    await bob.call("PATCH", "/profile", { businessName: "Northwind Studio (new)" });
    const fin = (await bob.call("POST", `/invoices/${inv.id}/finalize`)).body;
    const sent = (await bob.call("POST", `/estimates/${est.id}/send`)).body;
    for (const doc of [fin, sent]) {
      expect(doc.clientTaxId).toBe("FR00000000000");
      expect(doc.clientAddress).toMatchObject({ city: "Lyon", country: "FR" });
      expect(doc.seller).toEqual({
        businessName: "Northwind Studio (new)",
        legalName: "Northwind Studio GmbH",
        address: {
          line1: "Torstraße 1",
          line2: null,
          city: "Berlin",
          postalCode: "10119",
          region: null,
          country: "DE",
        },
        taxId: "DE123456789",
        companyId: null,
        contactName: null,
        email: "billing@northwind.test",
        phone: null,
        website: null,
        bankAccount: { accountName: "Northwind Studio GmbH", iban: "DE89370400440532013000", bic: "COBADEFFXXX" },
        footer: null,
      });
    }
    // …edits after never change the issued documents.
    await bob.call("PATCH", `/clients/${cid}`, { name: "Renamed", taxId: null, address: null });
    await bob.call("PATCH", "/profile", { businessName: "Other", bankAccount: null });
    const later = (await bob.call("GET", `/invoices/${inv.id}`)).body;
    const laterEst = (await bob.call("GET", `/estimates/${est.id}`)).body;
    for (const [now, then] of [
      [later, fin],
      [laterEst, sent],
    ]) {
      expect(now.seller).toEqual(then.seller);
      expect(now.clientTaxId).toBe(then.clientTaxId);
      expect(now.clientAddress).toEqual(then.clientAddress);
      expect(now.clientName).toBe(then.clientName);
    }
  });

  it("schedules carry the text fields and the breakdown to the invoices they generate", async () => {
    const res = await alice.call("POST", "/recurring-schedules", {
      clientId,
      frequency: "monthly",
      taxExemptionReason: "Exempt under §4 UStG",
      buyerReference: "BR-9",
      purchaseOrderReference: "PO-9",
      lineItems: [mixed[0], { description: "Insurance", unitPrice: "50.00", taxCategory: "exempt" }],
    });
    expect(res.status).toBe(201);
    expect(res.body.taxBreakdown).toEqual([
      { taxCategory: "standard", taxRate: "0.19", taxableAmount: "3840.00", taxAmount: "729.60" },
      { taxCategory: "exempt", taxRate: "0.00", taxableAmount: "50.00", taxAmount: "0.00" },
    ]);
    const invoice = (await alice.call("GET", `/invoices/${res.body.lastInvoiceId}`)).body;
    expect(invoice).toMatchObject({
      taxExemptionReason: "Exempt under §4 UStG",
      buyerReference: "BR-9",
      purchaseOrderReference: "PO-9",
    });
    expect(invoice.taxBreakdown).toEqual(res.body.taxBreakdown);
    const patched = await alice.call("PATCH", `/recurring-schedules/${res.body.id}`, { buyerReference: null });
    expect(patched.body.buyerReference).toBeNull();
  });
});
