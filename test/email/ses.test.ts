import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import PostalMime, { addressParser } from "postal-mime";
import { afterAll, describe, expect, it } from "vitest";
import { LOCAL_FROM, emailSender } from "@invoicing/core/email/sender";
import { SesTransport } from "@invoicing/core/email/ses-transport";
import { ALL_CAPABILITIES } from "@invoicing/functions/capabilities/all-capabilities";
import { createDeps } from "@invoicing/functions/capabilities/create-deps";

/**
 * Deployed, email goes through Amazon SES. No network here, so the real SDK client is pointed at a
 * local HTTP server (AWS_ENDPOINT_URL_SESV2, the SDK's own endpoint override) that records what it
 * receives and answers like SES: the request createDeps' transport makes is checked byte for byte.
 */
const received: { method: string; url: string; headers: IncomingMessage["headers"]; body: string }[] = [];
const server = createServer((req, res) => {
  let body = "";
  req.on("data", (chunk) => (body += chunk));
  req.on("end", () => {
    received.push({ method: req.method!, url: req.url!, headers: req.headers, body });
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ MessageId: "0100018c-ses-message-id" }));
  });
});
await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

// Set before anything reads SST's Resource: it loads the links from the environment once per process.
process.env.SST_RESOURCE_Email = JSON.stringify({
  type: "sst.aws.Email",
  sender: "billing@example.com",
  configSet: "invoicing-events",
});
process.env.AWS_ENDPOINT_URL_SESV2 = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
process.env.AWS_ACCESS_KEY_ID = "AKIDLOCALTEST";
process.env.AWS_SECRET_ACCESS_KEY = "local-test-secret";

describe("createDeps with a linked Email", () => {
  it("chooses SES, and SendEmail carries the sender, recipient, subject, text and configuration set", async () => {
    const deps = createDeps(
      { TABLE_NAME: "t", AWS_REGION: "eu-west-1", EMAIL_REPLY_TO: "help@example.com" },
      ALL_CAPABILITIES,
    );
    expect(deps.outbox?.kind).toBe("ses");
    expect(deps.outbox).toBeInstanceOf(SesTransport);

    const receipt = await deps.outbox!.deliver({
      id: "20261122T093000000Z-0123456789abcdef",
      to: "client@example.org",
      subject: "Invoice INV-000001 for USD 64.92, due 6 Dec 2026",
      text: "Hello Acme,\n\nGrüße: http://example.com/public/invoices/abc\n",
      createdAt: "2026-11-22T09:30:00.000Z",
    });
    expect(receipt.providerMessageId).toBe("0100018c-ses-message-id");

    expect(received).toHaveLength(1);
    const [request] = received;
    expect(request!.method).toBe("POST");
    expect(request!.url).toBe("/v2/email/outbound-emails");
    // Signed with SigV4 for SES in the configured region.
    expect(request!.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDLOCALTEST\/\d{8}\/eu-west-1\/ses\/aws4_request/,
    );
    const sent = JSON.parse(request!.body);
    expect(sent).toMatchObject({
      FromEmailAddress: "billing@example.com",
      Destination: { ToAddresses: ["client@example.org"] },
      ConfigurationSetName: "invoicing-events",
    });
    // Raw MIME: the same message the local outbox writes, parsed back as a mail client would.
    const mail = await PostalMime.parse(Buffer.from(sent.Content.Raw.Data, "base64").toString("utf8"));
    expect(mail.from?.address).toBe("billing@example.com");
    expect(mail.replyTo?.[0]?.address).toBe("help@example.com");
    expect(mail.to?.[0]?.address).toBe("client@example.org");
    expect(mail.subject).toBe("Invoice INV-000001 for USD 64.92, due 6 Dec 2026");
    expect(mail.text).toBe("Hello Acme,\n\nGrüße: http://example.com/public/invoices/abc\n");
    expect(mail.headers.find((h) => h.key === "x-invoicing-message-id")?.value).toBe(
      "20261122T093000000Z-0123456789abcdef",
    );
  });

  it("carries the business's name, its reply address, the HTML part and the PDF in the raw message", async () => {
    const deps = createDeps({ TABLE_NAME: "t", AWS_REGION: "eu-west-1" }, ALL_CAPABILITIES);
    const pdf = Buffer.from("%PDF-1.7\n% a test attachment\n%%EOF\n");
    await deps.outbox!.deliver({
      id: "20261122T093000000Z-fedcba9876543210",
      to: "client@example.org",
      subject: "Invoice INV-000002",
      text: "Plain",
      html: "<p>Rich</p>",
      fromName: "Northwind Studio",
      replyTo: "owner@northwind.test",
      createdAt: "2026-11-22T09:30:00.000Z",
      attachments: [{ filename: "INV-000002.pdf", contentType: "application/pdf", content: pdf }],
    });
    const sent = JSON.parse(received.at(-1)!.body);
    expect(sent.FromEmailAddress).toBe("Northwind Studio <billing@example.com>");
    const mail = await PostalMime.parse(Buffer.from(sent.Content.Raw.Data, "base64").toString("utf8"));
    expect(mail.from).toMatchObject({ name: "Northwind Studio", address: "billing@example.com" });
    expect(mail.replyTo?.[0]?.address).toBe("owner@northwind.test");
    expect(mail.html?.trim()).toBe("<p>Rich</p>");
    expect(mail.attachments).toHaveLength(1);
    expect(mail.attachments[0]).toMatchObject({ filename: "INV-000002.pdf", mimeType: "application/pdf" });
    expect(Buffer.from(mail.attachments[0]!.content as ArrayBuffer).equals(pdf)).toBe(true);
  });

  // Issue 29, finding 5: SES was given the raw `Müller GmbH <address>`; it wants RFC 2047 there.
  it("MIME-encodes a display name with non-ASCII letters in FromEmailAddress, quotes one with specials", () => {
    const ses = new SesTransport(() => Promise.reject(new Error("not sent")), { from: "billing@example.com" });
    const message = {
      id: "20261122T093000000Z-0123456789abcdef",
      to: "client@example.org",
      subject: "Invoice",
      text: "Plain",
      createdAt: "2026-11-22T09:30:00.000Z",
    };
    const names = [
      ["Müller GmbH", "=?utf-8?B?TcO8bGxlciBHbWJI?= <billing@example.com>"],
      ["Smith, Jones & Co.", '"Smith, Jones & Co." <billing@example.com>'],
      ["Northwind Studio", "Northwind Studio <billing@example.com>"],
    ] as const;
    for (const [fromName, expected] of names) {
      const from = ses.commandInput({ ...message, fromName }).FromEmailAddress!;
      expect(from).toBe(expected);
      expect(addressParser(from, { flatten: true })).toEqual([{ name: fromName, address: "billing@example.com" }]);
    }
    // A long name: several encoded words on ONE line (FromEmailAddress is no header line to fold).
    const long = "Ærøskøbing Købmandsgård & Søn — Tømrer og Snedker ApS".repeat(2);
    const from = ses.commandInput({ ...message, fromName: long }).FromEmailAddress!;
    expect(from).not.toMatch(/[\r\n]/);
    expect(from.match(/=\?utf-8\?B\?/g)!.length).toBeGreaterThan(2);
    expect(addressParser(from, { flatten: true })).toEqual([{ name: long, address: "billing@example.com" }]);
  });

  it("sends from the linked address, from invoices@<domain> for a domain identity, or from EMAIL_FROM", () => {
    const transport = (env: NodeJS.ProcessEnv) =>
      createDeps({ TABLE_NAME: "t", ...env }, ALL_CAPABILITIES).outbox as SesTransport;
    expect(transport({}).settings.from).toBe("billing@example.com");
    expect(transport({ EMAIL_FROM: "Acme Billing <accounts@example.com>" }).settings.from).toBe(
      "Acme Billing <accounts@example.com>",
    );
    expect(emailSender("example.com", {}).from).toBe("invoices@example.com");
    expect(emailSender(undefined, {}).from).toBe(LOCAL_FROM);
  });
});
