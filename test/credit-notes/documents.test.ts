import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import PostalMime from "postal-mime";
import { extractText, getDocumentProxy } from "unpdf";
import { beforeAll, describe, expect, it } from "vitest";
import { readFacturXml } from "@invoicing/functions/einvoice/facturx";
import { expectServedValid, officialValidation } from "../einvoice/validators";
import { BUYER, LINES, sellerWithBuyer } from "../support/documents";
import { createTestEnv, expectProblem, request, type TestEnv, type TestUser } from "../support/env";

/**
 * A credit note's documents as its client receives them, through HTTP (API.md section 17): the PDF
 * (private and public), the public page, the four e-invoices (and, with the official artefacts,
 * their validation), the email with CN-000001.pdf attached; and the invoice's documents, which now
 * show what was credited. PDFs and the email go to test-artifacts/ to be looked at.
 */
const ARTIFACTS = resolve(import.meta.dirname, "../../test-artifacts");
const official = officialValidation();

let env: TestEnv;
let alice: TestUser;
let invoice: { id: number; invoiceNumber: string; publicToken: string; issueDate: string; clientId: number };
let note: {
  id: number;
  creditNoteNumber: string;
  publicToken: string;
  total: string;
  amountAppliedToDue: string;
  amountToRefund: string;
};

beforeAll(async () => {
  env = await createTestEnv();
  let clientId: number;
  ({ user: alice, clientId } = await sellerWithBuyer(env, { logo: false }));
  const created = await alice.call("POST", "/invoices", {
    clientId,
    currency: "EUR",
    lineItems: LINES,
    buyerReference: "04011000-12345-03",
    notes: "Thank you for the pleasant collaboration.",
  });
  await alice.call("POST", `/invoices/${created.body.id}/finalize`);
  invoice = (await alice.call("POST", `/invoices/${created.body.id}/send`)).body;
  // 4,930.10 invoiced, 4,000.00 paid: 930.10 due when the credit note comes.
  const paid = await alice.call("POST", `/invoices/${invoice.id}/payments`, {
    amount: "4000.00",
    paymentMethod: "bank_transfer",
  });
  expect(paid.status).toBe(201);
  const issued = await alice.call("POST", `/invoices/${invoice.id}/credit-notes`, {
    reason: "order_change",
    memo: "Ten hours of brand work were not needed.\nGoodwill for the late delivery.",
    lineItems: [
      { invoiceLineId: 1, quantity: "10" },
      { description: "Goodwill credit", unitPrice: "50.00", taxRate: "0.19" },
    ],
  });
  expect(issued.status).toBe(201);
  note = issued.body;
});

const save = (name: string, bytes: Uint8Array | string) => {
  mkdirSync(ARTIFACTS, { recursive: true });
  writeFileSync(join(ARTIFACTS, name), bytes);
};

async function fetchRaw(path: string, auth = true) {
  const res = await env.app.request(
    `http://localhost${path}`,
    auth ? { headers: { Authorization: `Bearer ${alice.key}` } } : {},
  );
  return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) };
}

async function pdfText(bytes: Uint8Array): Promise<string> {
  const { text } = await extractText(await getDocumentProxy(bytes.slice()), { mergePages: true });
  return text.replace(/\s+/g, " ");
}

/** "22 Nov 2026": how documents print a date (UTC day). */
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const day = (iso: string) => {
  const d = new Date(iso);
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
};

describe("the credit note's documents", () => {
  it("the issue made a partial credit of a partly paid invoice: 930.10 off what was due, 557.40 to refund", () => {
    expect(note.creditNoteNumber).toBe("CN-000001");
    // 10 × 120.00 at 19 % = 1,428.00; 50.00 at 19 % = 59.50.
    expect(note.total).toBe("1487.50");
    expect(note.amountAppliedToDue).toBe("930.10");
    expect(note.amountToRefund).toBe("557.40");
  });

  it("the PDF (owner's and public alike): titled Credit note, the invoice it corrects and its date, reason, memo, the refund; no payment instructions", async () => {
    const own = await fetchRaw(`/credit-notes/${note.id}/pdf`);
    expect(own.status).toBe(200);
    expect(own.headers.get("content-type")).toBe("application/pdf");
    expect(own.headers.get("content-disposition")).toBe('inline; filename="CN-000001.pdf"');
    const pub = await fetchRaw(`/public/credit-notes/${note.publicToken}/pdf`, false);
    expect(pub.status).toBe(200);
    expect(pub.headers.get("cache-control")).toBe("no-store");
    save("credit-note.pdf", pub.bytes);
    const text = await pdfText(pub.bytes);
    expect(await pdfText(own.bytes)).toBe(text);
    for (const expected of [
      "CREDIT NOTE",
      "CN-000001",
      "ISSUED",
      `Credit note for invoice ${invoice.invoiceNumber} of ${day(invoice.issueDate)}`,
      "Reason Order change",
      "Ten hours of brand work were not needed.",
      "Goodwill for the late delivery.",
      "Northwind Studio",
      BUYER.name,
      "DE987654321",
      "Brand identity: logo, colours, typography",
      "Goodwill credit",
      "VAT 19 % on 1,250.00",
      "EUR 1,487.50",
      `Deducted from invoice ${invoice.invoiceNumber} EUR 930.10`,
      "Amount to be refunded EUR 557.40",
      "Credit note CN-000001 · Page 1 of 1",
    ]) {
      expect(text, expected).toContain(expected);
    }
    // The client pays nothing: no bank details, no pay link, no "amount due".
    for (const absent of ["IBAN", "Payment by bank transfer", "Pay online", "Amount due", "DRAFT"]) {
      expect(text, absent).not.toContain(absent);
    }
  });

  it("the public page: the same view, no key needed; an unknown token is 404", async () => {
    const res = await request(env.app, "GET", `/public/credit-notes/${note.publicToken}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const html = res.text;
    save("credit-note.html", html);
    expect(html).toContain("<title>Credit note CN-000001</title>");
    expect(html).toContain(
      `<p class="reference">Credit note for invoice <span class="nowrap">${invoice.invoiceNumber}</span> of ${day(invoice.issueDate)}</p>`,
    );
    // A document number never breaks at its hyphen on a phone ("INV-" / "000001" at 390 px).
    expect(html).toContain(`<span>Deducted from invoice <span class="nowrap">${invoice.invoiceNumber}</span></span>`);
    expect(html).toContain(
      '<p class="memo">Ten hours of brand work were not needed.\nGoodwill for the late delivery.</p>',
    );
    expect(html).toContain("<dt>Reason</dt><dd>Order change</dd>");
    expect(html).toContain("<span>Amount to be refunded</span><span>EUR 557.40</span>");
    expect(html).toContain(`href="/public/credit-notes/${note.publicToken}/pdf"`);
    expect(html).toContain("Questions about this credit note?");
    expect(html).not.toContain("Pay now");
    expect(html).not.toContain('data-testid="payment"');
    expectProblem(
      await request(env.app, "GET", "/public/credit-notes/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
      404,
      "not_found",
    );
    // An invoice's token does not open a credit note, nor the reverse.
    expectProblem(await request(env.app, "GET", `/public/credit-notes/${invoice.publicToken}`), 404, "not_found");
    expectProblem(await request(env.app, "GET", `/public/invoices/${note.publicToken}`), 404, "not_found");
  });

  it("the invoice's documents show the Credited row: its credit note numbers and creditedAmount", async () => {
    const pdf = await fetchRaw(`/invoices/${invoice.id}/pdf`);
    save("invoice-credited.pdf", pdf.bytes);
    const text = await pdfText(pdf.bytes);
    expect(text).toContain("Amount paid EUR 4,000.00");
    expect(text).toContain("Credited (CN-000001) EUR 1,487.50");
    // Paid by the credit: nothing due, no payment instructions.
    expect(text).toContain("Amount due EUR 0.00");
    expect(text).not.toContain("IBAN");
    const page = await request(env.app, "GET", `/public/invoices/${invoice.publicToken}`);
    expect(page.text).toContain(
      '<span>Credited (<span class="nowrap">CN-000001</span>)</span><span>EUR 1,487.50</span>',
    );
  });

  it("another user's credit note is 404 on every document path", async () => {
    const bob = await env.user();
    expectProblem(await bob.call("GET", `/credit-notes/${note.id}/pdf`), 404, "not_found");
    expectProblem(await bob.call("GET", `/credit-notes/${note.id}/e-invoice`), 404, "not_found");
    expect((await fetchRaw(`/credit-notes/${note.id}/pdf`, false)).status).toBe(401);
    expectProblem(await alice.call("GET", "/credit-notes/999/e-invoice?format=cii"), 404, "not_found");
    expectProblem(await alice.call("GET", `/credit-notes/${note.id}/e-invoice?format=pdf`), 400, "validation_error");
  });
});

describe("the credit note's e-invoices, as served", () => {
  it("five formats named after its number; type 381 with the invoice it corrects; officially valid", async () => {
    const served = mkdtempSync(join(tmpdir(), "credit-note-einvoice-"));
    // Both parties' Peppol identifiers, which format=peppol needs (and the others carry).
    expect((await alice.call("PATCH", "/profile", { peppolId: "9930:DE123456789" })).status).toBe(200);
    expect((await alice.call("PATCH", `/clients/${invoice.clientId}`, { peppolId: "9930:DE987654321" })).status).toBe(
      200,
    );
    for (const [format, marker] of [
      ["ubl", "<cbc:CreditNoteTypeCode>381</cbc:CreditNoteTypeCode>"],
      ["cii", "<ram:TypeCode>381</ram:TypeCode>"],
      ["xrechnung", "<cbc:CreditNoteTypeCode>381</cbc:CreditNoteTypeCode>"],
      ["peppol", '<cbc:EndpointID schemeID="9930">DE987654321</cbc:EndpointID>'],
    ] as const) {
      const res = await fetchRaw(`/credit-notes/${note.id}/e-invoice?format=${format}`);
      expect(res.status, format).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/xml; charset=utf-8");
      expect(res.headers.get("content-disposition")).toBe('attachment; filename="CN-000001.xml"');
      const xml = new TextDecoder().decode(res.bytes);
      expect(xml).toContain(marker);
      const issued = invoice.issueDate.slice(0, 10);
      // BG-3: the invoice it corrects, by number and issue date.
      expect(xml.replace(/\s+/g, "")).toContain(
        format === "cii"
          ? `<ram:InvoiceReferencedDocument><ram:IssuerAssignedID>${invoice.invoiceNumber}</ram:IssuerAssignedID><ram:FormattedIssueDateTime><qdt:DateTimeStringformat="102">${issued.replace(/-/g, "")}`
          : `<cac:InvoiceDocumentReference><cbc:ID>${invoice.invoiceNumber}</cbc:ID><cbc:IssueDate>${issued}</cbc:IssueDate>`,
      );
      mkdirSync(join(served, format));
      writeFileSync(join(served, format, "CN-000001.xml"), xml);
    }
    const facturx = await fetchRaw(`/public/credit-notes/${note.publicToken}/e-invoice?format=facturx`, false);
    expect(facturx.status).toBe(200);
    expect(facturx.headers.get("content-disposition")).toBe('attachment; filename="CN-000001.pdf"');
    const embedded = (await readFacturXml(facturx.bytes))!;
    expect(embedded).toContain("<ram:TypeCode>381</ram:TypeCode>");
    mkdirSync(join(served, "facturx"));
    writeFileSync(join(served, "facturx", "CN-000001.xml"), embedded);
    expect(await pdfText(facturx.bytes)).toContain("CREDIT NOTE");
    if (official) await expectServedValid(served, ["ubl", "cii", "xrechnung", "facturx", "peppol"]);
    await alice.call("PATCH", "/profile", { peppolId: null });
    await alice.call("PATCH", `/clients/${invoice.clientId}`, { peppolId: null });
  }, 300_000);

  it("e_invoice_incomplete names what the invoice lacks, as for invoices (invoice.buyerReference for XRechnung)", async () => {
    const other = await env.user();
    const client = await other.call("POST", "/clients", { name: "Beta" });
    const draft = await other.call("POST", "/invoices", { clientId: client.body.id, lineItems: [LINES[0]] });
    await other.call("POST", `/invoices/${draft.body.id}/finalize`);
    const cn = (await other.call("POST", `/invoices/${draft.body.id}/credit-notes`)).body;
    const ubl = expectProblem(await other.call("GET", `/credit-notes/${cn.id}/e-invoice`), 422, "e_invoice_incomplete");
    expect(ubl.errors!.map((e) => e.path)).toEqual([
      "profile.businessName",
      "profile.address",
      "client.address",
      "profile.taxId",
    ]);
    const xr = expectProblem(
      await request(env.app, "GET", `/public/credit-notes/${cn.publicToken}/e-invoice?format=xrechnung`),
      422,
      "e_invoice_incomplete",
    );
    expect(xr.errors!.map((e) => e.path)).toContain("invoice.buyerReference");
  });
});

describe("the credit note email", () => {
  it("send emails it with CN-000001.pdf attached, the same PDF as the documents", async () => {
    await env.drainStream(); // the invoice's own email, sent before
    const before = readdirSync(env.outboxDir);
    const sent = await alice.call("POST", `/credit-notes/${note.id}/send`);
    expect(sent.status).toBe(200);
    await env.drainStream();
    const files = readdirSync(env.outboxDir).filter((f) => f.endsWith(".eml") && !before.includes(f));
    expect(files).toHaveLength(1);
    const raw = readFileSync(join(env.outboxDir, files[0]!), "utf8");
    save("credit-note.eml", raw);
    const mail = await PostalMime.parse(raw);
    expect(mail.subject).toBe(`Credit note CN-000001 for invoice ${invoice.invoiceNumber}: EUR 1,487.50`);
    expect(mail.to?.[0]?.address).toBe(BUYER.email);
    expect(mail.text).toContain(
      `Here is credit note CN-000001 for EUR 1,487.50, correcting invoice ${invoice.invoiceNumber} of ${day(invoice.issueDate)}. EUR 557.40 will be refunded to you. The PDF is attached.`,
    );
    // The invoice's date among the facts too, as on the page and the PDF.
    expect(mail.text).toContain(`Invoice date: ${day(invoice.issueDate)}`);
    expect(mail.html).toContain(day(invoice.issueDate));
    expect(mail.text).toContain("Ten hours of brand work were not needed.");
    expect(mail.text).toContain("Reason: Order change");
    expect(mail.text).toContain(`Deducted from invoice ${invoice.invoiceNumber}: EUR 930.10`);
    expect(mail.text).toContain("Amount to be refunded: EUR 557.40");
    expect(mail.text).toContain(`http://localhost:3000/public/credit-notes/${note.publicToken}`);
    expect(mail.html).toContain("Amount to be refunded");
    expect(mail.attachments).toHaveLength(1);
    expect(mail.attachments[0]).toMatchObject({ filename: "CN-000001.pdf", mimeType: "application/pdf" });
    const text = await pdfText(new Uint8Array(mail.attachments[0]!.content as ArrayBuffer));
    expect(text).toContain("CREDIT NOTE");
    expect(text).toContain(`Credit note for invoice ${invoice.invoiceNumber} of ${day(invoice.issueDate)}`);
    expect(text).toContain("Amount to be refunded EUR 557.40");
  });
});
