import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import PostalMime from "postal-mime";
import { extractText, getDocumentProxy } from "unpdf";
import { beforeAll, describe, expect, it } from "vitest";
import { createDb } from "@invoicing/core/db/dynamodb";
import { createApp } from "@invoicing/functions/app/create-app";
import { createTestEnvWithClient, expectProblem, request, type TestEnv, type TestUser } from "../support/env";

let env: TestEnv;
let alice: TestUser;
let clientId: number;

const HOSTILE_NAME = `<script>alert("name")</script> & Sons`;
const HOSTILE_LINE = `<img src=x onerror="alert(1)"> Design & "build"`;
const HOSTILE_NOTES = `</p><script>document.title='owned'</script>\nSecond line`;

beforeAll(async () => {
  const hostile = { name: HOSTILE_NAME, email: "ap@sons.test", paymentTermsDays: 14 };
  ({ env, user: alice, clientId } = await createTestEnvWithClient(hostile));
});

/** Public requests carry no Authorization header. */
const publicGet = (path: string) => request(env.app, "GET", path);

async function invoice(options: { send?: boolean; finalize?: boolean; body?: Record<string, unknown> } = {}) {
  const created = await alice.call("POST", "/invoices", {
    clientId,
    notes: HOSTILE_NOTES,
    lineItems: [
      { description: HOSTILE_LINE, quantity: "3", unitPrice: "19.99", taxRate: "0.0825" },
      { description: "Hosting (12 months)", quantity: "1", unitPrice: "1200.00" },
    ],
    ...options.body,
  });
  expect(created.status).toBe(201);
  if (options.finalize === false) return created.body;
  await alice.call("POST", `/invoices/${created.body.id}/finalize`);
  if (options.send === false) return (await alice.call("GET", `/invoices/${created.body.id}`)).body;
  return (await alice.call("POST", `/invoices/${created.body.id}/send`)).body;
}

function expectSecurityHeaders(headers: Headers) {
  expect(headers.get("x-content-type-options")).toBe("nosniff");
  expect(headers.get("referrer-policy")).toBe("no-referrer");
  expect(headers.get("x-frame-options")).toBe("DENY");
  const csp = headers.get("content-security-policy") ?? "";
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).not.toContain("unsafe-inline");
  expect(csp).not.toMatch(/script-src/);
}

async function pdfText(bytes: ArrayBuffer): Promise<string> {
  const pdf = await getDocumentProxy(new Uint8Array(bytes));
  const { text } = await extractText(pdf, { mergePages: true });
  return text;
}

async function rawGet(path: string, headers: Record<string, string> = {}) {
  return env.app.request(`http://localhost${path}`, { headers });
}

describe("GET /public/invoices/{token}", () => {
  it("shows a sent invoice to anyone with the link: number, parties, dates, lines, totals, status", async () => {
    const inv = await invoice();
    const res = await publicGet(`/public/invoices/${inv.publicToken}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html; charset=utf-8/i);
    expectSecurityHeaders(res.headers);
    const html = res.text;
    expect(html.startsWith("<!DOCTYPE html>")).toBe(true);
    expect(html).toContain(`<title>Invoice ${inv.invoiceNumber}</title>`);
    expect(html).toContain(">Sent<");
    expect(html).toContain("USD 1,264.92"); // 59.97 + 4.95 + 1200.00
    expect(html).toContain("USD 1,200.00");
    expect(html).toContain("8.25 %");
    expect(html).toContain("22 Nov 2026"); // issued
    expect(html).toContain("6 Dec 2026"); // due: 14 days of terms
    expect(html).toContain("ap@sons.test");
    expect(html).toContain("Hosting (12 months)");
    expect(html).toContain(`href="/public/invoices/${inv.publicToken}/pdf"`);
    // No payment link on this invoice: no pay button.
    expect(html).not.toContain('class="pay"');
  });

  it("shows user text as text: no tag of theirs reaches the page", async () => {
    const inv = await invoice();
    const html = (await publicGet(`/public/invoices/${inv.publicToken}`)).text;
    expect(html).toContain("&lt;script&gt;alert(&quot;name&quot;)&lt;/script&gt; &amp; Sons");
    expect(html).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt; Design &amp; &quot;build&quot;");
    expect(html).toContain("&lt;/p&gt;&lt;script&gt;document.title=&#39;owned&#39;&lt;/script&gt;");
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<img/i);
    expect(html).not.toMatch(/<[a-z][^>]*\son\w+=/i); // no event handler attribute on any tag
  });

  it("has a pay button to the payment link while unpaid, none once paid", async () => {
    const inv = await invoice({ body: { altProcessorPaymentLink: "https://pay.example.com/i/123?a=1&b=2" } });
    const html = (await publicGet(`/public/invoices/${inv.publicToken}`)).text;
    expect(html).toMatch(
      /<a class="pay" href="https:\/\/pay\.example\.com\/i\/123\?a=1&amp;b=2" rel="noopener noreferrer">Pay now<\/a>/,
    );
    await alice.call("POST", `/invoices/${inv.id}/mark-paid`, { paymentMethod: "cash" });
    const paid = (await publicGet(`/public/invoices/${inv.publicToken}`)).text;
    expect(paid).toContain(">Paid<");
    expect(paid).not.toContain('class="pay"');
  });

  it("a partly paid invoice: its page and PDF show what was paid and the amount due after the payment", async () => {
    const inv = await invoice({ body: { altProcessorPaymentLink: "https://pay.example.test/partly" } }); // total 1,264.92
    const paid = await alice.call("POST", `/invoices/${inv.id}/payments`, { amount: "264.92", paymentMethod: "cash" });
    expect(paid.status).toBe(201);
    expect((await alice.call("GET", `/invoices/${inv.id}`)).body).toMatchObject({
      status: "sent",
      amountDue: "1000.00",
    });
    const text = (html: string) => html.replace(/<[^>]*>/g, " ").replace(/\s+/g, " ");
    const page = text((await publicGet(`/public/invoices/${inv.publicToken}`)).text);
    expect(page).toMatch(/Total USD 1,264\.92/);
    expect(page).toMatch(/Amount paid USD 264\.92/);
    expect(page).toMatch(/Amount due USD 1,000\.00/);
    expect(page).toContain("Pay now"); // something is still due
    const pdf = (await pdfText(await (await rawGet(`/public/invoices/${inv.publicToken}/pdf`)).arrayBuffer())).replace(
      /\s+/g,
      " ",
    );
    expect(pdf).toMatch(/Amount paid USD 264\.92/);
    expect(pdf).toMatch(/Amount due USD 1,000\.00/);
    expect(pdf).not.toMatch(/Amount due USD 1,264\.92/);
  });

  it("shows finalized and void invoices, and 404s drafts, unknown and malformed tokens (no auth needed)", async () => {
    const finalized = await invoice({ send: false });
    expect((await publicGet(`/public/invoices/${finalized.publicToken}`)).status).toBe(200);
    const voided = await invoice();
    await alice.call("POST", `/invoices/${voided.id}/void`);
    const voidPage = await publicGet(`/public/invoices/${voided.publicToken}`);
    expect(voidPage.status).toBe(200);
    expect(voidPage.text).toContain(">Void<");

    const draft = await invoice({ finalize: false });
    for (const path of [
      `/public/invoices/${draft.publicToken}`,
      `/public/invoices/${draft.publicToken}/pdf`,
      `/public/invoices/${"A".repeat(32)}`, // well-shaped, unknown
      "/public/invoices/short",
      `/public/invoices/${"A".repeat(33)}`,
      `/public/invoices/${encodeURIComponent("<script>alert(1)</script>")}`,
      `/public/invoices/${"A".repeat(31)}.`,
      `/public/invoices/${"A".repeat(32)}/pdf`,
      `/public/estimates/${finalized.publicToken}`, // an invoice's token is not an estimate's
      "/public/no/such/page", // the headers cover every /public path, routed or not
    ]) {
      const res = await publicGet(path);
      expectProblem(res, 404, "not_found");
      expectSecurityHeaders(res.headers);
    }
  });

  it("answers a malformed token without touching the database", async () => {
    // An app whose database cannot be reached: a lookup would be a 503, never a 404.
    const offline = createApp({
      db: createDb({ tableName: "nowhere", dynamoEndpoint: "http://127.0.0.1:9", region: "local" }),
      clock: () => new Date(),
    });
    expectProblem(await request(offline, "GET", "/public/invoices/not-a-token"), 404, "not_found");
    expectProblem(await request(offline, "GET", "/public/estimates/x"), 404, "not_found");
    expectProblem(await request(offline, "GET", "/public/invoices/bad/pdf"), 404, "not_found");
    expectProblem(await request(offline, "GET", `/public/invoices/${"A".repeat(32)}`), 503, "service_unavailable");
  });

  it("reveals nothing of the owner beyond the document", async () => {
    const inv = await invoice();
    const html = (await publicGet(`/public/invoices/${inv.publicToken}`)).text;
    expect(html).not.toContain(alice.userId);
    expect(html).not.toContain("USER#");
    expect(html).not.toContain("INVOICE#");
    // The API path of the invoice (not the public path, whose random token may start with its digits).
    expect(html).not.toMatch(new RegExp(`(?<!/public)/invoices/${inv.id}(?![A-Za-z0-9_-])`));
  });
});

describe("GET /public/estimates/{token}", () => {
  it("shows a sent estimate (what was quoted, valid until, status) and its email links to it", async () => {
    const est = (
      await alice.call("POST", "/estimates", {
        clientId,
        validUntil: "2026-12-31",
        lineItems: [{ description: "Website redesign <b>", quantity: "1", unitPrice: "4800.00" }],
      })
    ).body;
    const draftPage = await publicGet(`/public/estimates/${est.publicToken}`);
    expectProblem(draftPage, 404, "not_found");

    await env.drainStream(); // emails of the earlier tests' sends
    const filesBefore = readdirSync(env.outboxDir);
    const sent = await alice.call("POST", `/estimates/${est.id}/send`, { to: "buyer@sons.test" });
    await env.drainStream(); // the stream subscriber delivers the queued email
    expect(sent.status).toBe(200);

    const res = await publicGet(`/public/estimates/${est.publicToken}`);
    expect(res.status).toBe(200);
    expectSecurityHeaders(res.headers);
    expect(res.text).toContain(`<title>Estimate ${est.estimateNumber}</title>`);
    expect(res.text).toContain("Valid until");
    expect(res.text).toContain("31 Dec 2026");
    expect(res.text).toContain("USD 4,800.00");
    expect(res.text).toContain("Website redesign &lt;b&gt;");
    expect(res.text).toContain(">Sent<");
    expect(res.text).not.toContain('class="pay"');
    // An estimate's token is not an invoice's.
    expectProblem(await publicGet(`/public/invoices/${est.publicToken}`), 404, "not_found");

    const newFiles = readdirSync(env.outboxDir).filter((f) => f.endsWith(".eml") && !filesBefore.includes(f));
    expect(newFiles).toHaveLength(1);
    const mail = await PostalMime.parse(readFileSync(join(env.outboxDir, newFiles[0]!), "utf8"));
    expect(mail.to?.[0]?.address).toBe("buyer@sons.test");
    expect(mail.subject).toContain(est.estimateNumber);
    expect(mail.text).toContain(`http://localhost:3000/public/estimates/${est.publicToken}`);
    expect(mail.text).toContain("valid until 31 Dec 2026");

    await alice.call("POST", `/estimates/${est.id}/accept`);
    expect((await publicGet(`/public/estimates/${est.publicToken}`)).text).toContain(">Accepted<");
  });
});

describe("PDFs", () => {
  it("GET /public/invoices/{token}/pdf is the page's content as a PDF, user text as text", async () => {
    const inv = await invoice({ body: { terms: "Net 14. Überweisung bitte an 日本 Bank 🎉" } });
    const res = await rawGet(`/public/invoices/${inv.publicToken}/pdf`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/pdf");
    expect(res.headers.get("content-disposition")).toBe(`inline; filename="${inv.invoiceNumber}.pdf"`);
    expectSecurityHeaders(res.headers);
    const bytes = await res.arrayBuffer();
    expect(Buffer.from(bytes.slice(0, 5)).toString("latin1")).toBe("%PDF-");
    const text = await pdfText(bytes);
    expect(text).toContain(`Invoice ${inv.invoiceNumber}`);
    expect(text).toContain("SENT");
    expect(text).toContain("USD 1,264.92");
    expect(text).toContain(`<img src=x onerror="alert(1)"> Design & "build"`);
    // The client's name is set in a narrow column: read its wrapped lines as one.
    expect(text.replace(/\s+/g, " ")).toContain(`<script>alert("name")</script> & Sons`);
    expect(text).toContain("Überweisung"); // WinAnsi has it
    expect(text).toContain("?? Bank ?"); // it has no CJK or emoji: shown as "?"
    expect(text).not.toContain("DRAFT");
  });

  it("GET /invoices/{id}/pdf: the owner's, any status, a draft marked DRAFT; 404 for others, 401 without key", async () => {
    const draft = await invoice({ finalize: false });
    const res = await rawGet(`/invoices/${draft.id}/pdf`, { Authorization: `Bearer ${alice.key}` });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/pdf");
    const text = await pdfText(await res.arrayBuffer());
    expect(text).toContain("DRAFT");
    expect(text).toContain("Draft invoice");
    expect(text).toContain("Hosting (12 months)");

    const sent = await invoice();
    const sentPdf = await rawGet(`/invoices/${sent.id}/pdf`, { Authorization: `Bearer ${alice.key}` });
    expect(await pdfText(await sentPdf.arrayBuffer())).toContain(`Invoice ${sent.invoiceNumber}`);

    const bob = await env.user();
    expectProblem(await bob.call("GET", `/invoices/${draft.id}/pdf`), 404, "not_found");
    expectProblem(await request(env.app, "GET", `/invoices/${draft.id}/pdf`), 401, "unauthorized");
    expectProblem(await alice.call("GET", "/invoices/0/pdf"), 400, "validation_error");
  });

  it("lays out 100 long lines over several pages", async () => {
    const lines = Array.from({ length: 100 }, (_, i) => ({
      description: `Line ${i + 1} ${"lorem ipsum ".repeat(20)}`,
      unitPrice: "1.00",
    }));
    const inv = await invoice({ body: { lineItems: lines } });
    const res = await rawGet(`/public/invoices/${inv.publicToken}/pdf`);
    const pdf = await getDocumentProxy(new Uint8Array(await res.arrayBuffer()));
    expect(pdf.numPages).toBeGreaterThan(3);
    const { text } = await extractText(pdf, { mergePages: true });
    expect(text).toContain("Line 1 ");
    expect(text).toContain("Line 100 ");
    expect(text).toContain("USD 100.00");
  });
});
