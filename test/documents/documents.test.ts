import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { getDocumentProxy } from "unpdf";
import { beforeAll, describe, expect, it } from "vitest";
import { BUYER, LINES, sellerWithBuyer } from "../support/documents";
import { createTestEnv, expectProblem, request, type TestEnv, type TestUser } from "../support/env";

/**
 * What a document shows (the page and the PDF alike, from one view): the seller with logo, Bill
 * to, number, status, dates, references, lines, one tax row per rate, totals, the exemption
 * reason, payment instructions while something is due, notes, terms and the seller's footer.
 * PDFs are written to test-artifacts/ to be looked at.
 */
const ARTIFACTS = resolve(import.meta.dirname, "../../test-artifacts");

let env: TestEnv;
let alice: TestUser;
let clientId: number;

beforeAll(async () => {
  env = await createTestEnv();
  ({ user: alice, clientId } = await sellerWithBuyer(env));
});

async function sentInvoice(extra: Record<string, unknown> = {}) {
  const created = await alice.call("POST", "/invoices", {
    clientId,
    lineItems: LINES,
    notes: "Thank you for the pleasant collaboration.",
    terms: "Payable within 14 days without deduction.",
    buyerReference: "04011000-12345-03",
    purchaseOrderReference: "PO-2026-7781",
    deliveryDate: "2026-11-20",
    ...extra,
  });
  expect(created.status).toBe(201);
  expect((await alice.call("POST", `/invoices/${created.body.id}/finalize`)).status).toBe(200);
  const sent = await alice.call("POST", `/invoices/${created.body.id}/send`);
  expect(sent.status).toBe(200);
  return sent.body;
}

async function pdfOf(path: string, auth = false) {
  const res = await env.app.request(
    `http://localhost${path}`,
    auth ? { headers: { Authorization: `Bearer ${alice.key}` } } : {},
  );
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/pdf");
  const bytes = new Uint8Array(await res.arrayBuffer());
  const pdf = await getDocumentProxy(bytes.slice());
  const pages: string[] = [];
  for (let i = 1; i <= pdf.numPages; i++) {
    const page = await pdf.getPage(i);
    const content = await page.getTextContent();
    pages.push(content.items.map((item) => ("str" in item ? item.str : "")).join("\n"));
  }
  return { bytes, pages, text: pages.join("\n"), numPages: pdf.numPages };
}

const save = (name: string, bytes: Uint8Array) => {
  mkdirSync(ARTIFACTS, { recursive: true });
  writeFileSync(join(ARTIFACTS, name), bytes);
};

/** Every field section 9 lists, as it must read on the document. */
function expectEveryField(raw: string, invoice: { invoiceNumber: string }) {
  // Wrapped lines read as one; labels may be set in capitals.
  const text = raw.replace(/\s+/g, " ").toLowerCase();
  for (const expected of [
    "Northwind Studio",
    "Northwind Studio GmbH",
    "Torstraße 1",
    "10119 Berlin",
    "Germany",
    "DE123456789",
    "HRB 12345 B",
    "billing@northwind.test",
    "+49 30 1234567",
    "https://northwind.test",
    "Bill to",
    BUYER.name,
    "Abteilung Kreditorenbuchhaltung",
    "60311 Frankfurt am Main",
    "Hessen",
    "DE987654321",
    "ap@acme.test",
    invoice.invoiceNumber,
    "Sent",
    "22 Nov 2026",
    "6 Dec 2026",
    "20 Nov 2026",
    "04011000-12345-03",
    "PO-2026-7781",
    "Brand identity: logo, colours, typography",
    "EUR 120.00",
    "19 %",
    "7 %",
    "EUR 3,840.00",
    "VAT 19 % on 4,080.00",
    "775.20",
    "VAT 7 % on 70.00",
    "4.90",
    "Subtotal",
    "EUR 4,150.00",
    "EUR 780.10",
    "Total",
    "EUR 4,930.10",
    "Amount paid",
    "EUR 0.00",
    "Amount due",
    "IBAN",
    "DE89 3704 0044 0532 0130 00",
    "COBADEFFXXX",
    "Reference",
    "Thank you for the pleasant collaboration.",
    "Payable within 14 days",
    "Amtsgericht Charlottenburg",
  ]) {
    expect(text, expected).toContain(expected.toLowerCase());
  }
}

describe("the invoice document", () => {
  it("the public page shows every field of the view", async () => {
    const inv = await sentInvoice({ currency: "EUR" });
    const res = await request(env.app, "GET", `/public/invoices/${inv.publicToken}`);
    expect(res.status).toBe(200);
    const html = res.text.replace(/&amp;/g, "&");
    expectEveryField(html, inv);
    expect(html).toMatch(/<img class="logo" src="data:image\/png;base64,[A-Za-z0-9+/=]+" alt="Northwind Studio"/);
    expect(html).toContain(`>Reference</dt><dd>${inv.invoiceNumber}</dd>`);
    expect(html).toContain(`href="/public/invoices/${inv.publicToken}/pdf"`);
  });

  it("the PDF holds the same fields, numbered pages; payment instructions vanish once paid", async () => {
    const inv = await sentInvoice({ currency: "EUR" });
    const pdf = await pdfOf(`/public/invoices/${inv.publicToken}/pdf`);
    save("invoice.pdf", pdf.bytes);
    expectEveryField(pdf.text, inv);
    expect(pdf.text).toContain(`Invoice ${inv.invoiceNumber} · Page 1 of ${pdf.numPages}`);
    expect(pdf.text).toContain("Payment by bank transfer");

    await alice.call("POST", `/invoices/${inv.id}/mark-paid`, { paymentMethod: "bank_transfer" });
    const paid = await pdfOf(`/invoices/${inv.id}/pdf`, true);
    expect(paid.text).toContain("Paid");
    expect(paid.text).not.toContain("Payment by bank transfer");
    const page = (await request(env.app, "GET", `/public/invoices/${inv.publicToken}`)).text;
    expect(page).not.toContain('data-testid="payment"');
  });

  it("a draft shows the current profile and is marked DRAFT; an exemption reason is printed", async () => {
    const draft = await alice.call("POST", "/invoices", {
      clientId,
      currency: "EUR",
      taxExemptionReason: "Reverse charge: VAT to be accounted for by the recipient.",
      lineItems: [{ description: "Consulting (EU)", unitPrice: "1000.00", taxCategory: "reverse_charge" }],
    });
    const pdf = await pdfOf(`/invoices/${draft.body.id}/pdf`, true);
    expect(pdf.text).toContain("DRAFT");
    expect(pdf.text).toContain("Northwind Studio");
    expect(pdf.text).toContain("Reverse charge 0 % on 1,000.00");
    expect(pdf.text).toContain("Reverse charge: VAT to be accounted for by the recipient.");
  });

  it("repeats the table header on every page the lines run over", async () => {
    const lines = Array.from({ length: 60 }, (_, i) => ({
      description: `Line ${i + 1} ${"lorem ipsum ".repeat(12)}`,
      unitPrice: "1.00",
      taxRate: "0.19",
    }));
    const inv = await sentInvoice({ lineItems: lines });
    const pdf = await pdfOf(`/public/invoices/${inv.publicToken}/pdf`);
    save("invoice-long.pdf", pdf.bytes);
    expect(pdf.numPages).toBeGreaterThan(2);
    const withLines = pdf.pages.filter((p) => /Line \d+ /.test(p));
    expect(withLines.length).toBeGreaterThan(1);
    for (const page of withLines) {
      expect(page).toContain("DESCRIPTION");
      expect(page).toContain("UNIT PRICE");
    }
    for (const [i, page] of pdf.pages.entries()) expect(page).toContain(`Page ${i + 1} of ${pdf.numPages}`);
  });
});

describe("estimate documents", () => {
  it("GET /estimates/{id}/pdf (any status, draft marked) and /public/estimates/{token}/pdf (non-draft)", async () => {
    const est = (
      await alice.call("POST", "/estimates", { clientId, currency: "EUR", validUntil: "2026-12-31", lineItems: LINES })
    ).body;
    const draft = await pdfOf(`/estimates/${est.id}/pdf`, true);
    expect(draft.text).toContain("DRAFT");
    expectProblem(await request(env.app, "GET", `/public/estimates/${est.publicToken}/pdf`), 404, "not_found");
    await alice.call("POST", `/estimates/${est.id}/send`);
    const pdf = await pdfOf(`/public/estimates/${est.publicToken}/pdf`);
    save("estimate.pdf", pdf.bytes);
    const text = pdf.text.replace(/\s+/g, " ");
    for (const expected of [
      `Estimate ${est.estimateNumber}`,
      "ESTIMATE",
      "Northwind Studio",
      "DE123456789",
      BUYER.name,
      "DE987654321",
      "Valid until",
      "31 Dec 2026",
      "VAT 19 % on 4,080.00",
      "775.20",
      "EUR 4,930.10",
    ]) {
      expect(text, expected).toContain(expected);
    }
    expect(text).not.toContain("IBAN");
    const bob = await env.user();
    expectProblem(await bob.call("GET", `/estimates/${est.id}/pdf`), 404, "not_found");
    const page = await request(env.app, "GET", `/public/estimates/${est.publicToken}`);
    expect(page.text).toContain(`href="/public/estimates/${est.publicToken}/pdf"`);
  });
});

describe("the largest valid invoice", () => {
  it("renders, page and PDF: 100 lines of 1000-character words without spaces, 5000-character notes and terms", async () => {
    const word = (c: string) => c.repeat(1000);
    const lines = Array.from({ length: 100 }, (_, i) => ({
      description: word("W").slice(0, 995) + String(i).padStart(5, "0"),
      unitPrice: "1.00",
    }));
    const notes = `N${"M".repeat(4998)}Z`;
    const terms = `T${"W".repeat(4998)}E`;
    const inv = await sentInvoice({ lineItems: lines, notes, terms });
    const page = await request(env.app, "GET", `/public/invoices/${inv.publicToken}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(notes);
    const pdf = await pdfOf(`/public/invoices/${inv.publicToken}/pdf`);
    save("invoice-worst-case.pdf", pdf.bytes);
    // All text present, in order: the pieces each long word was cut into join back to the word.
    const items = pdf.text.split("\n");
    const pieces = (re: RegExp) => items.filter((item) => re.test(item)).join("");
    expect(pieces(/^(W+\d{0,5}|\d{5})$/).startsWith(lines.map((l) => l.description).join(""))).toBe(true);
    expect(pieces(/^N?M+Z?$/)).toBe(notes);
    expect(pieces(/^T?W+E?$/).endsWith(terms.slice(1))).toBe(true);
    expect(items.some((item) => item.startsWith("TWWW"))).toBe(true);
  });
});
