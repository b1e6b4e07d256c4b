import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PDFDocument } from "pdf-lib";
import { beforeAll, describe, expect, it } from "vitest";
import { readFacturXml } from "@invoicing/functions/einvoice/facturx";
import { createTestEnvWithClient, expectProblem, type TestEnv, type TestUser } from "../support/env";
import { expectServedValid, officialValidation } from "./validators";

/**
 * GET /invoices/{id}/e-invoice and its public twin, through the whole app: status codes, problems,
 * headers. The writer's output itself is checked in writer.test.ts.
 */
const official = officialValidation();
let env: TestEnv;
let alice: TestUser;
let clientId: number;
const line = { description: "Beratung <&> 😀", quantity: "2", unitPrice: "100.00", taxRate: "0.19" };

beforeAll(async () => {
  const beispiel = { name: "Beispiel AG", email: "einkauf@beispiel.de", currency: "EUR" };
  ({ env, user: alice, clientId } = await createTestEnvWithClient(beispiel));
});

async function finalized() {
  const draft = (await alice.call("POST", "/invoices", { clientId, lineItems: [line] })).body;
  return (await alice.call("POST", `/invoices/${draft.id}/finalize`)).body;
}

async function raw(path: string, auth = true) {
  const res = await env.app.request(
    `http://localhost${path}`,
    auth ? { headers: { Authorization: `Bearer ${alice.key}` } } : {},
  );
  return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) };
}

describe("GET /invoices/{id}/e-invoice", () => {
  it("a draft has no e-invoice: 422 invalid_transition (public: 404)", async () => {
    const draft = (await alice.call("POST", "/invoices", { clientId, lineItems: [line] })).body;
    expectProblem(await alice.call("GET", `/invoices/${draft.id}/e-invoice`), 422, "invalid_transition");
    expectProblem(await alice.call("GET", `/invoices/${draft.id}/e-invoice?format=cii`), 422, "invalid_transition");
    expectProblem(
      await alice.call("GET", `/public/invoices/${draft.publicToken}/e-invoice`, undefined, {}),
      404,
      "not_found",
    );
  });

  it("an unknown format is 400, before the id is looked up", async () => {
    const invoice = await finalized();
    const bad = expectProblem(
      await alice.call("GET", `/invoices/${invoice.id}/e-invoice?format=pdf`),
      400,
      "validation_error",
    );
    expect(bad.errors!.map((e) => e.path)).toEqual(["format"]);
    expectProblem(await alice.call("GET", `/invoices/999999/e-invoice?format=zugferd`), 400, "validation_error");
    expectProblem(
      await alice.call("GET", `/public/invoices/${invoice.publicToken}/e-invoice?format=UBL`),
      400,
      "validation_error",
    );
    expectProblem(await alice.call("GET", `/invoices/999999/e-invoice`), 404, "not_found");
  });

  it("needs auth; another user's invoice is 404", async () => {
    const invoice = await finalized();
    expect((await raw(`/invoices/${invoice.id}/e-invoice`, false)).status).toBe(401);
    const bob = await env.user();
    expectProblem(await bob.call("GET", `/invoices/${invoice.id}/e-invoice`), 404, "not_found");
  });

  it("missing seller and buyer data: 422 e_invoice_incomplete naming every field, per format", async () => {
    const invoice = await finalized();
    const ubl = expectProblem(
      await alice.call("GET", `/invoices/${invoice.id}/e-invoice`),
      422,
      "e_invoice_incomplete",
    );
    expect(ubl.errors!.map((e) => e.path)).toEqual([
      "profile.businessName",
      "profile.address",
      "client.address",
      "profile.taxId",
    ]);
    expect(ubl.detail).toContain("profile.address");
    const xr = expectProblem(
      await alice.call("GET", `/public/invoices/${invoice.publicToken}/e-invoice?format=xrechnung`, undefined, {}),
      422,
      "e_invoice_incomplete",
    );
    expect(xr.errors!.map((e) => e.path)).toEqual(
      expect.arrayContaining(["buyerReference", "profile.email", "profile.bankAccount"]),
    );
    expect(xr.errors!.map((e) => e.path)).not.toContain("client.email");
    const peppol = expectProblem(
      await alice.call("GET", `/invoices/${invoice.id}/e-invoice?format=peppol`),
      422,
      "e_invoice_incomplete",
    );
    expect(peppol.errors!.map((e) => e.path)).toEqual([
      "profile.businessName",
      "profile.address",
      "client.address",
      "profile.taxId",
      "profile.peppolId",
      "client.peppolId",
      "buyerReference",
    ]);
  });

  it("a complete invoice in every format, named after its number (and, with the artefacts, officially valid)", async () => {
    const profile = await alice.call("PATCH", "/profile", {
      businessName: "Muster Design",
      address: { line1: "Hauptstraße 1", city: "Berlin", postalCode: "10115", country: "DE" },
      taxId: "DE123456789",
      contactName: "Erika Mustermann",
      email: "rechnung@muster-design.de",
      phone: "+49 30 1234567",
      bankAccount: { accountName: "Muster Design", iban: "DE89 3704 0044 0532 0130 00", bic: "COBADEFFXXX" },
    });
    expect(profile.status).toBe(200);
    await alice.call("PATCH", `/clients/${clientId}`, {
      address: { line1: "Marktplatz 5", city: "München", postalCode: "80331", country: "DE" },
      taxId: "DE987654321",
    });
    // Peppol identifiers are read when the document is written: set after finalizing, they count.
    const draft = (await alice.call("POST", "/invoices", { clientId, lineItems: [line], buyerReference: "04011000-1" }))
      .body;
    const invoice = (await alice.call("POST", `/invoices/${draft.id}/finalize`)).body;
    expect((await alice.call("PATCH", "/profile", { peppolId: "0088:5790000435975" })).status).toBe(200);
    expect((await alice.call("PATCH", `/clients/${clientId}`, { peppolId: "9930:de987654321" })).status).toBe(200);
    // What the API serves, kept for the official validators below (one directory per stylesheet).
    const served = mkdtempSync(join(tmpdir(), "einvoice-served-"));
    for (const [format, type, ext] of [
      ["ubl", "application/xml", "xml"],
      ["cii", "application/xml", "xml"],
      ["xrechnung", "application/xml", "xml"],
      ["peppol", "application/xml", "xml"],
    ] as const) {
      const res = await raw(`/invoices/${invoice.id}/e-invoice?format=${format}`);
      expect(res.status, format).toBe(200);
      expect(res.headers.get("content-type")).toContain(type);
      expect(res.headers.get("content-disposition")).toBe(`attachment; filename="${invoice.invoiceNumber}.${ext}"`);
      const xml = new TextDecoder().decode(res.bytes);
      expect(xml).toContain(`>${invoice.invoiceNumber}<`);
      expect(xml).toContain("Beratung &lt;&amp;&gt; 😀");
      mkdirSync(join(served, format));
      writeFileSync(join(served, format, `${invoice.invoiceNumber}.xml`), xml);
    }
    const peppolXml = readFileSync(join(served, "peppol", `${invoice.invoiceNumber}.xml`), "utf8");
    expect(peppolXml).toContain('<cbc:EndpointID schemeID="0088">5790000435975</cbc:EndpointID>');
    expect(peppolXml).toContain('<cbc:EndpointID schemeID="9930">de987654321</cbc:EndpointID>');
    if (official) await expectServedValid(served, ["ubl", "cii", "xrechnung", "peppol"]);
    const pdf = await raw(`/public/invoices/${invoice.publicToken}/e-invoice?format=facturx`, false);
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get("content-type")).toBe("application/pdf");
    expect(pdf.headers.get("content-disposition")).toBe(`attachment; filename="${invoice.invoiceNumber}.pdf"`);
    expect((await PDFDocument.load(pdf.bytes)).getPageCount()).toBeGreaterThanOrEqual(1);
    expect(await readFacturXml(pdf.bytes)).toContain("<rsm:CrossIndustryInvoice");
    // A void invoice is still the invoice that was issued.
    await alice.call("POST", `/invoices/${invoice.id}/void`);
    expect((await raw(`/invoices/${invoice.id}/e-invoice`)).status).toBe(200);
    // The official validation runs here in every run now (one Java process): room for a loaded machine.
  }, 300_000);

  it("a credited, partly credited, voided or paid-and-credited invoice states what was issued: BT-115 = total − paid, in every format", async () => {
    // The parties complete, as in the test above (a PATCH that changes nothing when it already ran).
    await alice.call("PATCH", "/profile", {
      businessName: "Muster Design",
      address: { line1: "Hauptstraße 1", city: "Berlin", postalCode: "10115", country: "DE" },
      taxId: "DE123456789",
      contactName: "Erika Mustermann",
      email: "rechnung@muster-design.de",
      phone: "+49 30 1234567",
      bankAccount: { accountName: "Muster Design", iban: "DE89 3704 0044 0532 0130 00", bic: "COBADEFFXXX" },
    });
    await alice.call("PATCH", `/clients/${clientId}`, {
      address: { line1: "Marktplatz 5", city: "München", postalCode: "80331", country: "DE" },
      taxId: "DE987654321",
    });
    // 2 × 100.00 at 19 %: total 238.00; one of the two credited is 119.00.
    const sent = async (number: string) => {
      const draft = (await alice.call("POST", "/invoices", { clientId, lineItems: [line], buyerReference: number }))
        .body;
      expect((await alice.call("POST", `/invoices/${draft.id}/finalize`)).status).toBe(200);
      expect((await alice.call("POST", `/invoices/${draft.id}/send`)).status).toBe(200);
      return draft.id as number;
    };
    const pay = async (id: number, amount: string) =>
      expect(
        (await alice.call("POST", `/invoices/${id}/payments`, { amount, paymentMethod: "bank_transfer" })).status,
      ).toBe(201);
    const credit = async (id: number, body: object) =>
      expect((await alice.call("POST", `/invoices/${id}/credit-notes`, body)).status).toBe(201);
    const lineOf = async (id: number) => (await alice.call("GET", `/invoices/${id}`)).body.lineItems[0].id;

    const partly = await sent("partly");
    await pay(partly, "50.00");
    await credit(partly, { lineItems: [{ invoiceLineId: await lineOf(partly), quantity: "1" }] });
    const whole = await sent("whole");
    await credit(whole, {});
    const voided = await sent("voided");
    await pay(voided, "38.00");
    expect((await alice.call("POST", `/invoices/${voided}/void`)).status).toBe(200);
    const refunded = await sent("refunded");
    await pay(refunded, "238.00");
    await credit(refunded, { lineItems: [{ invoiceLineId: await lineOf(refunded), quantity: "1" }] });
    const cases = [
      { id: partly, status: "sent", amountDue: "69.00", paid: "50.00", due: "188.00" },
      { id: whole, status: "void", amountDue: "0.00", paid: "0.00", due: "238.00" },
      { id: voided, status: "void", paid: "38.00", due: "200.00" },
      { id: refunded, status: "paid", amountDue: "0.00", paid: "238.00", due: "0.00" },
    ];

    const served = mkdtempSync(join(tmpdir(), "einvoice-credited-"));
    for (const format of ["ubl", "cii", "xrechnung", "facturx"] as const) mkdirSync(join(served, format));
    for (const c of cases) {
      const invoice = (await alice.call("GET", `/invoices/${c.id}`)).body;
      expect({ status: invoice.status, total: invoice.total, amountPaid: invoice.amountPaid }).toEqual({
        status: c.status,
        total: "238.00",
        amountPaid: c.paid,
      });
      if (c.amountDue) expect(invoice.amountDue).toBe(c.amountDue);
      const name = `${invoice.invoiceNumber}.xml`;
      for (const format of ["ubl", "xrechnung"] as const) {
        const xml = new TextDecoder().decode((await raw(`/invoices/${c.id}/e-invoice?format=${format}`)).bytes);
        expect(xml, `${invoice.invoiceNumber} ${format}`).toContain(`<cbc:PrepaidAmount currencyID="EUR">${c.paid}<`);
        expect(xml, `${invoice.invoiceNumber} ${format}`).toContain(`<cbc:PayableAmount currencyID="EUR">${c.due}<`);
        writeFileSync(join(served, format, name), xml);
      }
      const cii = new TextDecoder().decode((await raw(`/invoices/${c.id}/e-invoice?format=cii`)).bytes);
      const facturx = (await readFacturXml((await raw(`/invoices/${c.id}/e-invoice?format=facturx`)).bytes))!;
      for (const [format, xml] of [
        ["cii", cii],
        ["facturx", facturx],
      ] as const) {
        expect(xml, `${invoice.invoiceNumber} ${format}`).toContain(`<ram:TotalPrepaidAmount>${c.paid}<`);
        expect(xml, `${invoice.invoiceNumber} ${format}`).toContain(`<ram:DuePayableAmount>${c.due}<`);
        writeFileSync(join(served, format, name), xml);
      }
    }
    if (official) await expectServedValid(served, ["ubl", "cii", "xrechnung", "facturx"]);
  }, 300_000);
});
