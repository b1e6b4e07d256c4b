import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import PostalMime from "postal-mime";
import { extractText, getDocumentProxy } from "unpdf";
import { beforeAll, describe, expect, it } from "vitest";
import { jobs } from "@invoicing/core/jobs/all";
import { BUYER, LINES, SELLER, sellerWithBuyer } from "../support/documents";
import { createTestEnv, type TestEnv, type TestUser } from "../support/env";

/**
 * The emails a client receives: multipart/alternative (text and HTML), from the business's name
 * on the service's address, replies to the business, and on send the invoice PDF attached.
 */
let env: TestEnv;
let alice: TestUser;
let clientId: number;

beforeAll(async () => {
  env = await createTestEnv();
  ({ user: alice, clientId } = await sellerWithBuyer(env, { logo: false }));
});

const emls = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith(".eml"))
    .sort();

async function sendAndRead(user: TestUser, outbox: string) {
  const before = emls(outbox);
  const created = await user.call("POST", "/invoices", {
    clientId,
    currency: "EUR",
    lineItems: LINES,
    notes: "<b>Danke</b> & bis bald",
  });
  await user.call("POST", `/invoices/${created.body.id}/finalize`);
  const invoice = (await user.call("POST", `/invoices/${created.body.id}/send`)).body;
  await env.drainStream(); // delivery is the stream subscriber's
  const files = emls(outbox).filter((f) => !before.includes(f));
  return { invoice, files };
}

describe("the invoice email of send", () => {
  it("is multipart: text + HTML + the invoice PDF, from the business, replying to the business", async () => {
    const { invoice, files } = await sendAndRead(alice, env.outboxDir);
    expect(files).toHaveLength(1);
    const raw = readFileSync(join(env.outboxDir, files[0]!), "utf8");
    const mail = await PostalMime.parse(raw);
    expect(mail.from).toEqual({ name: "Northwind Studio", address: "invoices@localhost" });
    expect(mail.replyTo?.[0]?.address).toBe("billing@northwind.test");
    expect(mail.to?.[0]?.address).toBe("ap@acme.test");
    expect(mail.text).toContain(`Here is invoice ${invoice.invoiceNumber} for EUR 4,930.10`);
    expect(mail.text).toContain(`http://localhost:3000/public/invoices/${invoice.publicToken}`);
    // The HTML part: tables and inline styles, no external assets, user text escaped.
    expect(mail.html).toContain("<table");
    expect(mail.html).toContain(`href="http://localhost:3000/public/invoices/${invoice.publicToken}"`);
    expect(mail.html).toContain("EUR 4,930.10");
    expect(mail.html).toContain("Acme Handelsgesellschaft mbH &amp; Co. KG");
    expect(mail.html).not.toMatch(/<(script|link|style)\b/i);
    expect(mail.html).not.toMatch(/src=/i);
    expect(mail.html).toContain("Amtsgericht Charlottenburg");

    expect(mail.attachments).toHaveLength(1);
    const [pdf] = mail.attachments;
    expect(pdf).toMatchObject({
      filename: `${invoice.invoiceNumber}.pdf`,
      mimeType: "application/pdf",
      disposition: "attachment",
    });
    const bytes = new Uint8Array(pdf!.content as ArrayBuffer);
    expect(Buffer.from(bytes.slice(0, 5)).toString("latin1")).toBe("%PDF-");
    const { text } = await extractText(await getDocumentProxy(bytes), { mergePages: true });
    expect(text).toContain(invoice.invoiceNumber);
    expect(text).toContain("EUR 4,930.10");
    expect(text).toContain("DE89 3704 0044 0532 0130 00");
  });

  it("states in its text the amount due its PDF states, though a payment and a credit note came between the send and the delivery", async () => {
    const before = emls(env.outboxDir);
    const created = (await alice.call("POST", "/invoices", { clientId, currency: "EUR", lineItems: LINES })).body;
    await alice.call("POST", `/invoices/${created.id}/finalize`);
    await alice.call("POST", `/invoices/${created.id}/send`);
    // Recorded before the stream subscriber delivers the email (seconds in production).
    const paid = await alice.call("POST", `/invoices/${created.id}/payments`, {
      amount: "1000.00",
      paymentMethod: "cash",
    });
    expect(paid.status).toBe(201);
    const credited = await alice.call("POST", `/invoices/${created.id}/credit-notes`, {
      lineItems: [{ description: "Goodwill credit", unitPrice: "50.00", taxRate: "0.19" }],
    });
    expect(credited.status).toBe(201);
    await env.drainStream();
    const [file] = emls(env.outboxDir).filter((f) => !before.includes(f));
    const mail = await PostalMime.parse(readFileSync(join(env.outboxDir, file!), "utf8"));
    const inText = /Amount due: (EUR [\d,.]+)/.exec(mail.text ?? "")?.[1];
    expect(inText).toBe("EUR 4,930.10"); // as sent: nothing paid yet
    const bytes = new Uint8Array(mail.attachments[0]!.content as ArrayBuffer);
    const { text: pdf } = await extractText(await getDocumentProxy(bytes), { mergePages: true });
    const inPdf = /Amount due\s*(EUR [\d,.]+)/.exec(pdf)?.[1];
    expect(inPdf).toBe(inText);
    expect(pdf).not.toContain("Credited"); // nor the credit note issued after the send
  });

  it("waits in the outbox where no PDF renderer is (the API function) and goes out, PDF attached, from the job", async () => {
    const api = await createTestEnv({ extraDeps: { renderPdf: undefined } });
    const bob = await api.user();
    await bob.call("PATCH", "/profile", SELLER);
    const cid = (await bob.call("POST", "/clients", BUYER)).body.id;
    const created = await bob.call("POST", "/invoices", { clientId: cid, lineItems: LINES });
    await bob.call("POST", `/invoices/${created.body.id}/finalize`);
    expect((await bob.call("POST", `/invoices/${created.body.id}/send`)).status).toBe(200);
    await api.drainStream(); // a deliverer without a renderer leaves it queued
    expect(emls(api.outboxDir)).toEqual([]);
    const withRenderer = { ...api.deps, renderPdf: env.deps.renderPdf };
    const run = await jobs.reminders!(withRenderer, api.clock.now);
    expect(run.emailsDelivered).toBe(1);
    const mail = await PostalMime.parse(readFileSync(join(api.outboxDir, emls(api.outboxDir)[0]!), "utf8"));
    expect(mail.attachments.map((a) => a.filename)).toEqual(["INV-000001.pdf"]);
  });

  it("reminders and estimates are multipart/alternative too, from the business", async () => {
    const est = (await alice.call("POST", "/estimates", { clientId, lineItems: LINES, validUntil: "2026-12-31" })).body;
    const before = emls(env.outboxDir);
    await alice.call("POST", `/estimates/${est.id}/send`);
    await env.drainStream();
    const [file] = emls(env.outboxDir).filter((f) => !before.includes(f));
    const mail = await PostalMime.parse(readFileSync(join(env.outboxDir, file!), "utf8"));
    expect(mail.from?.name).toBe("Northwind Studio");
    expect(mail.html).toContain("Valid until");
    expect(mail.text).toContain("valid until 31 Dec 2026");
    expect(mail.attachments).toEqual([]);
  });
});
