import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import fc from "fast-check";
import PostalMime from "postal-mime";
import { beforeAll, describe, expect, it } from "vitest";
import { renderEml } from "@invoicing/core/email/eml";
import { FileTransport } from "@invoicing/core/email/file-transport";
import { deliverQueued, outboxKey, queueEmail, sweepOutbox, type OutboxItem } from "@invoicing/core/email/outbox";
import { commit } from "@invoicing/core/db/commit";
import type { EmailMessage, EmailTransport } from "@invoicing/core/capabilities/email-transport";
import { jobs } from "@invoicing/core/jobs/all";
import { ALL_CAPABILITIES } from "@invoicing/functions/capabilities/all-capabilities";
import { createDeps } from "@invoicing/functions/capabilities/create-deps";
import { createTestEnv, createTestEnvWithClient, expectProblem, type TestEnv, type TestUser } from "../support/env";
import { WIDGET as line } from "../support/line-items";

let env: TestEnv;
let alice: TestUser;
let clientId: number;

beforeAll(async () => {
  ({ env, user: alice, clientId } = await createTestEnvWithClient({ name: "Acme GmbH", paymentTermsDays: 14 }));
});

const emlFiles = (dir: string): string[] => {
  try {
    return readdirSync(dir)
      .filter((f) => f.endsWith(".eml"))
      .sort();
  } catch {
    return [];
  }
};

async function sentInvoice(user: TestUser, body: Record<string, unknown> = {}) {
  const created = await user.call("POST", "/invoices", { clientId, lineItems: [line] });
  await user.call("POST", `/invoices/${created.body.id}/finalize`);
  const sent = await user.call("POST", `/invoices/${created.body.id}/send`, body);
  expect(sent.status).toBe(200);
  await env.drainStream(); // delivery is the stream subscriber's: the outbox record's insert triggers it
  return sent.body;
}

describe("invoice email on send", () => {
  it("writes one RFC 5322 .eml with the public link to the send's recipient", async () => {
    const before = emlFiles(env.outboxDir);
    const invoice = await sentInvoice(alice);
    const files = emlFiles(env.outboxDir).filter((f) => !before.includes(f));
    expect(files).toHaveLength(1);
    // Sortable name: the queue time first, then a unique part.
    expect(files[0]).toMatch(/^20261122T093000000Z-[0-9a-f]{16}\.eml$/);

    const raw = readFileSync(join(env.outboxDir, files[0]!), "utf8");
    const [head] = raw.split("\r\n\r\n");
    expect(head).toMatch(/^From: Invoicing <invoices@localhost>\r\n/m);
    expect(head).toMatch(/^To: billing@acme\.test$/m);
    expect(head).toMatch(/^Date: Sun, 22 Nov 2026 09:30:00 \+0000$/m);
    expect(head).toMatch(/^Message-ID: <20261122T093000000Z-[0-9a-f]{16}@localhost>$/m);
    expect(head).toMatch(/^MIME-Version: 1\.0$/m);
    // The invoice email: text and HTML alternatives, with the invoice PDF attached.
    expect(head).toMatch(/^Content-Type: multipart\/mixed; boundary="[^"]+"$/m);
    expect(raw).toMatch(/^Content-Type: multipart\/alternative; boundary="[^"]+"$/m);
    expect(raw).toMatch(/^Content-Type: text\/plain; charset=utf-8$/m);
    expect(raw).toMatch(/^Content-Type: text\/html; charset=utf-8$/m);
    expect(raw).toMatch(/^Content-Transfer-Encoding: quoted-printable$/m);
    // CRLF everywhere, no line over 78 characters.
    expect(raw.replace(/\r\n/g, "")).not.toMatch(/[\r\n]/);
    for (const l of raw.split("\r\n")) expect(l.length).toBeLessThanOrEqual(78);

    const mail = await PostalMime.parse(raw);
    expect(mail.to?.[0]?.address).toBe("billing@acme.test");
    expect(mail.subject).toContain(invoice.invoiceNumber);
    expect(mail.subject).toContain("USD 64.92");
    expect(mail.text).toContain(`http://localhost:3000/public/invoices/${invoice.publicToken}`);
    expect(mail.text).toContain("Hello Acme GmbH,");
  });

  it("sends to `to` when given, and a failed send queues nothing", async () => {
    const before = emlFiles(env.outboxDir);
    const invoice = await sentInvoice(alice, { to: "ap@elsewhere.test" });
    expectProblem(await alice.call("POST", `/invoices/${invoice.id}/send`), 422, "invalid_transition");
    const files = emlFiles(env.outboxDir).filter((f) => !before.includes(f));
    expect(files).toHaveLength(1);
    const mail = await PostalMime.parse(readFileSync(join(env.outboxDir, files[0]!), "utf8"));
    expect(mail.to?.[0]?.address).toBe("ap@elsewhere.test");
  });

  it("keeps the email queued when delivery is not possible, and the sweep delivers it exactly once", async () => {
    const offline = await createTestEnv({ extraDeps: { outbox: undefined } });
    const bob = await offline.user();
    const cid = (await bob.call("POST", "/clients", { name: "Bob's client", email: "c@bob.test" })).body.id;
    const inv = (await bob.call("POST", "/invoices", { clientId: cid, lineItems: [line] })).body;
    await bob.call("POST", `/invoices/${inv.id}/finalize`);
    expect((await bob.call("POST", `/invoices/${inv.id}/send`)).status).toBe(200);
    expect(emlFiles(offline.outboxDir)).toEqual([]);

    // The job runs where a transport exists: the queued email goes out once, however often it runs.
    const online = { ...offline.deps, outbox: new FileTransport(offline.outboxDir, { from: "x@y.test" }) };
    const runs = await Promise.all([1, 2, 3].map(() => jobs.reminders!(online, offline.clock.now)));
    expect(runs.reduce((n, r) => n + (r.emailsDelivered as number), 0)).toBe(1);
    await jobs.reminders!(online, offline.clock.now);
    const files = emlFiles(offline.outboxDir);
    expect(files).toHaveLength(1);
    expect(readFileSync(join(offline.outboxDir, files[0]!), "utf8")).toContain(`/public/invoices/${inv.publicToken}`);
  });
});

/** A transport that records what it was given and fails while `failing` is set. */
class RecordingTransport implements EmailTransport {
  readonly kind = "file" as const;
  delivered: EmailMessage[] = [];
  failing = false;
  async deliver(message: EmailMessage) {
    if (this.failing) throw new Error("transport down");
    this.delivered.push(message);
    return { providerMessageId: `p-${this.delivered.length}` };
  }
}

async function readOutbox(item: OutboxItem): Promise<OutboxItem> {
  const out = await env.deps.db.doc.send(
    new GetCommand({ TableName: env.deps.db.table, Key: outboxKey(item.userId, item.id), ConsistentRead: true }),
  );
  return out.Item as OutboxItem;
}

describe("outbox delivery", () => {
  it("delivers a record at most once, even to concurrent deliverers", async () => {
    const transport = new RecordingTransport();
    const deps = { ...env.deps, outbox: transport };
    const queued = queueEmail(deps, "outbox-user", { to: "a@b.test", subject: "Hi", text: "Body" });
    await commit(deps, [queued.write]);
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => deliverQueued(deps, queued.item)));
    expect(outcomes.filter((o) => o === "delivered")).toHaveLength(1);
    expect(outcomes.filter((o) => o === "skipped")).toHaveLength(7);
    expect(transport.delivered).toHaveLength(1);
    const stored = await readOutbox(queued.item);
    expect(stored).toMatchObject({ status: "sent", attempts: 1, providerMessageId: "p-1" });
    expect(stored.duePk).toBeUndefined();
    expect(stored.expiresAt).toBeGreaterThan(Date.parse(stored.sentAt!) / 1000);
    // A later sweep finds nothing to do.
    expect(await sweepOutbox(deps, "2030-01-01T00:00:00.000Z")).toEqual({ delivered: 0, failed: 0, reclaimed: 0 });
    expect(transport.delivered).toHaveLength(1);
  });

  it("puts a record whose delivery failed back on the due list, later, and retries it there", async () => {
    const transport = new RecordingTransport();
    transport.failing = true;
    const deps = { ...env.deps, outbox: transport };
    const queued = queueEmail(deps, "retry-user", { to: "a@b.test", subject: "Retry", text: "Body" });
    await commit(deps, [queued.write]);
    expect(await queued.deliver()).toBe("failed");
    const released = await readOutbox(queued.item);
    expect(released).toMatchObject({ status: "pending", attempts: 1, lastError: "Error" });
    expect(released.dueSk! > `${env.clock.now.toISOString()}`).toBe(true);

    transport.failing = false;
    // Not yet due: the sweep at "now" leaves it alone.
    await sweepOutbox(deps, env.clock.now.toISOString());
    expect(transport.delivered).toHaveLength(0);
    const later = new Date(env.clock.now.getTime() + 2 * 60_000).toISOString();
    const swept = await sweepOutbox({ ...deps, clock: () => new Date(later) }, later);
    expect(swept.delivered).toBeGreaterThanOrEqual(1);
    expect(transport.delivered.filter((m) => m.id === queued.item.id)).toHaveLength(1);
    expect(await readOutbox(queued.item)).toMatchObject({ status: "sent", attempts: 2 });
  });

  it("gives up after the last attempt and marks the record failed", async () => {
    const transport = new RecordingTransport();
    transport.failing = true;
    const queued = queueEmail({ ...env.deps, outbox: transport }, "giveup-user", {
      to: "a@b.test",
      subject: "X",
      text: "Y",
    });
    await commit(env.deps, [queued.write]);
    let item = queued.item;
    for (let i = 0; i < 5; i++) {
      expect(await deliverQueued({ ...env.deps, outbox: transport }, item)).toBe("failed");
      item = await readOutbox(item);
    }
    expect(item).toMatchObject({ status: "failed", attempts: 5 });
    expect(item.duePk).toBeUndefined();
  });
});

/** Parsers end a text body with a line break: compare texts that way (our emails always end with one). */
const asParsed = (text: string | undefined): string => (text ? text.replace(/\r\n/g, "\n").replace(/\n?$/, "\n") : "");

describe(".eml rendering", () => {
  const sender = { from: "Zoë Billing <billing@example.com>", replyTo: "help@example.com" };
  const message = (subject: string, text: string): EmailMessage => ({
    id: "20261122T093000000Z-0123456789abcdef",
    to: "client@example.org",
    subject,
    text,
    createdAt: "2026-11-22T09:30:00.000Z",
  });

  it("encodes non-ASCII headers and bodies so a mail parser reads them back exactly", async () => {
    const text = `Grüße — ${"long line with spaces and = signs ".repeat(6)}\ntrailing space \n\nemoji 🎉 and a dot\n.\nend`;
    const raw = renderEml(message("Rechnung für Café Müller — 🎉 fällig", text), sender);
    expect(raw).toMatch(/^Reply-To: help@example\.com$/m);
    expect(raw).not.toMatch(/[^\x00-\x7f]/); // 7-bit clean
    const mail = await PostalMime.parse(raw);
    expect(mail.subject).toBe("Rechnung für Café Müller — 🎉 fällig");
    expect(mail.from?.name).toBe("Zoë Billing");
    expect(mail.from?.address).toBe("billing@example.com");
    expect(asParsed(mail.text)).toBe(asParsed(text));
  });

  it("never lets a subject or address start a new header", async () => {
    const raw = renderEml(
      { ...message("Hello\r\nBcc: victim@example.com", "x"), to: "a@b.test\r\nBcc: v@example.com" },
      sender,
    );
    const mail = await PostalMime.parse(raw);
    expect(mail.headers.some((h) => h.key === "bcc")).toBe(false);
    expect(mail.subject).toBe("Hello Bcc: victim@example.com");
  });

  it("round-trips any text through quoted-printable (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: "grapheme", maxLength: 400 }),
        fc.string({ unit: "grapheme", maxLength: 120 }),
        async (body, subject) => {
          const cleanBody = body.replace(/\r\n?/g, "\n").replace(/\u0000/g, "");
          const cleanSubject = subject.replace(/[\r\n\u0000]/g, " ").trim();
          const raw = renderEml(message(cleanSubject, cleanBody), sender);
          for (const l of raw.split("\r\n")) expect(l.length).toBeLessThanOrEqual(998);
          const mail = await PostalMime.parse(raw);
          expect(asParsed(mail.text)).toBe(asParsed(cleanBody));
          expect((mail.subject ?? "").trim()).toBe(cleanSubject);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe("createDeps without a linked Email", () => {
  it("writes .eml files under <DATA_DIR>/outbox/, from and reply-to as configured, links to the local server", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "invoicing-data-"));
    const deps = createDeps(
      {
        TABLE_NAME: "t",
        DATA_DIR: dataDir,
        PORT: "4321",
        EMAIL_FROM: "Acme Billing <billing@acme.test>",
        EMAIL_REPLY_TO: "help@acme.test",
      },
      ALL_CAPABILITIES,
    );
    expect(deps.outbox?.kind).toBe("file");
    expect(deps.publicBaseUrl).toBe("http://localhost:4321");
    await deps.outbox!.deliver({
      id: "20261122T093000000Z-00000000000000ff",
      to: "c@d.test",
      subject: "S",
      text: "T\n",
      createdAt: "2026-11-22T09:30:00.000Z",
    });
    const dir = join(dataDir, "outbox");
    expect(readdirSync(dir)).toEqual(["20261122T093000000Z-00000000000000ff.eml"]);
    const mail = await PostalMime.parse(readFileSync(join(dir, "20261122T093000000Z-00000000000000ff.eml"), "utf8"));
    expect(mail.from).toMatchObject({ name: "Acme Billing", address: "billing@acme.test" });
    expect(mail.replyTo?.[0]?.address).toBe("help@acme.test");
    expect(mail.messageId).toBe("<20261122T093000000Z-00000000000000ff@acme.test>");
  });
});
