import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { LOCAL_FROM, emailSender } from "@invoicing/core/email/sender";
import { SesTransport } from "@invoicing/core/email/ses-transport";
import { createDeliveryDeps } from "@invoicing/functions/delivery-deps";

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
process.env.SST_RESOURCE_Email = JSON.stringify({ type: "sst.aws.Email", sender: "billing@example.com", configSet: "invoicing-events" });
process.env.AWS_ENDPOINT_URL_SESV2 = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
process.env.AWS_ACCESS_KEY_ID = "AKIDLOCALTEST";
process.env.AWS_SECRET_ACCESS_KEY = "local-test-secret";

describe("createDeps with a linked Email", () => {
  it("chooses SES, and SendEmail carries the sender, recipient, subject, text and configuration set", async () => {
    const deps = createDeliveryDeps({ TABLE_NAME: "t", AWS_REGION: "eu-west-1", EMAIL_REPLY_TO: "help@example.com" });
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
    expect(request!.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDLOCALTEST\/\d{8}\/eu-west-1\/ses\/aws4_request/);
    expect(JSON.parse(request!.body)).toEqual({
      FromEmailAddress: "billing@example.com",
      Destination: { ToAddresses: ["client@example.org"] },
      ReplyToAddresses: ["help@example.com"],
      ConfigurationSetName: "invoicing-events",
      Content: {
        Simple: {
          Subject: { Data: "Invoice INV-000001 for USD 64.92, due 6 Dec 2026", Charset: "UTF-8" },
          Body: { Text: { Data: "Hello Acme,\n\nGrüße: http://example.com/public/invoices/abc\n", Charset: "UTF-8" } },
          Headers: [{ Name: "X-Invoicing-Message-Id", Value: "20261122T093000000Z-0123456789abcdef" }],
        },
      },
    });
  });

  it("sends from the linked address, from invoices@<domain> for a domain identity, or from EMAIL_FROM", () => {
    const transport = (env: NodeJS.ProcessEnv) => createDeliveryDeps({ TABLE_NAME: "t", ...env }).outbox as SesTransport;
    expect(transport({}).settings.from).toBe("billing@example.com");
    expect(transport({ EMAIL_FROM: "Acme Billing <accounts@example.com>" }).settings.from).toBe("Acme Billing <accounts@example.com>");
    expect(emailSender("example.com", {}).from).toBe("invoices@example.com");
    expect(emailSender(undefined, {}).from).toBe(LOCAL_FROM);
  });
});
