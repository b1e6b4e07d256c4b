import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { getDocumentProxy } from "unpdf";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { marshall } from "@aws-sdk/util-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { entityKey, pad, userPk } from "@invoicing/core/db/keys";
import { peppolWorker, runPeppolJob } from "@invoicing/core/peppol/delivery";
import type { QueueName, WorkMessage } from "@invoicing/core/queue/port";
import { handleStreamBatch } from "@invoicing/core/stream/subscriber";
import { createStorecoveProvider } from "@invoicing/core/peppol/storecove";
import { writePeppolUbl } from "@invoicing/functions/capabilities/peppol-hand-over";
import { createTestEnv, expectProblem, type TestEnv, type TestUser } from "../support/env";
import { startFakeStorecove, type FakeStorecove } from "../support/fake-storecove";
import { ARTEFACTS, OFFICIAL, officialValidation, schematron } from "../einvoice/validators";
import { op } from "../support/fault-proxy";
import { createFaultyEnv, type FaultyEnv } from "../reliability/harness";

/**
 * Peppol delivery over HTTP (API.md section 19) against the Storecove stand-in
 * (test/support/fake-storecove.ts), with the real adapter: registration, the send's checks in their
 * order (nothing changes when one fails), the hand-over in the background (the peppol queue),
 * the outcome from the provider's evidence (the peppol job), the events; what the provider received
 * passes both official validators with the right endpoint ids. The first hand-over is the `peppol`
 * queue's: the subscriber hands the send to it, its worker hands over once, even when killed
 * mid-item (the fault proxy between the worker and DynamoDB Local).
 */
const official = officialValidation();
const ARTIFACTS = resolve(import.meta.dirname, "../../test-artifacts");
let fake: FakeStorecove;
let faulty: FaultyEnv;
let env: TestEnv;
let alice: TestUser;
let buyerId: number;

const SELLER = {
  businessName: "Atelier Bruxelles SRL",
  address: { line1: "Rue Neuve 12", city: "Bruxelles", postalCode: "1000", country: "BE" },
  taxId: "BE0123456749",
  email: "factures@atelier.be",
  bankAccount: { accountName: "Atelier Bruxelles SRL", iban: "BE68539007547034", bic: "GEBABEBB" },
};
const BUYER = {
  name: "Brasserie Namur SA",
  email: "compta@brasserie.be",
  currency: "EUR",
  taxId: "BE0999999823",
  address: { line1: "Place d'Armes 1", city: "Namur", postalCode: "5000", country: "BE" },
};
const LINE = { description: "Webdesign", quantity: "12", unitPrice: "85.00", taxRate: "0.21" };

async function finalizedInvoice(clientId = buyerId): Promise<{ id: number; version: number }> {
  const draft = await alice.call("POST", "/invoices", { clientId, lineItems: [LINE], purchaseOrderReference: "PO-7" });
  const finalized = await alice.call("POST", `/invoices/${draft.body.id}/finalize`);
  expect(finalized.status).toBe(200);
  return finalized.body;
}

/** The invoice as GET shows it, with its ETag: to see that nothing changed. */
const snapshot = async (path: string) => {
  const res = await alice.call("GET", path);
  return { body: res.body, etag: res.headers.get("etag") };
};

const eventTypes = async (resourceType: string, id: number) =>
  (
    (await alice.call("GET", `/events?resourceType=${resourceType}&resourceId=${id}&limit=50`)).body as {
      type: string;
    }[]
  )
    .map((e) => e.type)
    .reverse();

/** The public page's HTML and the PDF's text of a document (`kind`: "invoices" or "credit-notes"). */
async function documentsOf(kind: "invoices" | "credit-notes", id: number) {
  const { publicToken } = (await alice.call("GET", `/${kind}/${id}`)).body as { publicToken: string };
  const page = await env.app.request(`http://localhost/public/${kind}/${publicToken}`);
  expect(page.status).toBe(200);
  const res = await env.app.request(`http://localhost/public/${kind}/${publicToken}/pdf`);
  expect(res.headers.get("content-type")).toBe("application/pdf");
  const bytes = new Uint8Array(await res.arrayBuffer());
  const pdf = await getDocumentProxy(bytes.slice());
  const texts: string[] = [];
  for (let i = 1; i <= pdf.numPages; i++) {
    const content = await (await pdf.getPage(i)).getTextContent();
    texts.push(content.items.map((item) => ("str" in item ? item.str : "")).join("\n"));
  }
  // Written to test-artifacts/ to be looked at (the last call's: the delivered one).
  mkdirSync(ARTIFACTS, { recursive: true });
  writeFileSync(join(ARTIFACTS, `peppol-${kind}-${id}.pdf`), bytes);
  return { html: await page.text(), pdf: texts.join("\n") };
}

beforeAll(async () => {
  fake = await startFakeStorecove();
  faulty = await createFaultyEnv({
    extraDeps: {
      peppol: createStorecoveProvider({ apiKey: fake.apiKey, apiBase: fake.url }),
      peppolUbl: writePeppolUbl,
    },
    silenceWarnings: true,
  });
  env = faulty.env;
  alice = await env.user();
  expect((await alice.call("PATCH", "/profile", SELLER)).status).toBe(200);
  buyerId = (await alice.call("POST", "/clients", BUYER)).body.id;
});
afterAll(async () => {
  await faulty.close();
  await fake.close();
});

describe("without a provider", () => {
  it("422 peppol_not_configured on registration and on a Peppol send; email sends as before", async () => {
    const bare = await createTestEnv();
    const bob = await bare.user();
    expectProblem(await bob.call("PUT", "/profile/peppol-registration"), 422, "peppol_not_configured");
    const client = (await bob.call("POST", "/clients", { name: "X", email: "x@x.test" })).body;
    const draft = (await bob.call("POST", "/invoices", { clientId: client.id, lineItems: [LINE] })).body;
    await bob.call("POST", `/invoices/${draft.id}/finalize`);
    expectProblem(
      await bob.call("POST", `/invoices/${draft.id}/send`, { channel: "peppol" }),
      422,
      "peppol_not_configured",
    );
    expect((await bob.call("GET", `/invoices/${draft.id}`)).body.status).toBe("finalized");
    const sent = await bob.call("POST", `/invoices/${draft.id}/send`, { channel: "email" });
    expect(sent.body.status).toBe("sent");
    expect(sent.body.peppolDelivery).toBeNull();
  });
});

describe("registration and a Peppol send", () => {
  it("each 422 in its place, nothing changed; then sent, handed over, delivered, with the events", async () => {
    const invoice = await finalizedInvoice();
    const path = `/invoices/${invoice.id}`;
    const before = await snapshot(path);
    // 1. not registered
    expectProblem(await alice.call("POST", `${path}/send`, { channel: "peppol" }), 422, "peppol_not_registered");
    expectProblem(await alice.call("GET", "/profile/peppol-registration"), 404, "not_found");
    // Registration needs the profile's peppolId.
    expectProblem(await alice.call("PUT", "/profile/peppol-registration"), 422, "invalid_transition");
    await alice.call("PATCH", "/profile", { peppolId: "0208:0123456749" });
    const registered = await alice.call("PUT", "/profile/peppol-registration");
    expect(registered.status).toBe(200);
    expect(registered.body).toEqual({ peppolId: "0208:0123456749", status: "active", updatedAt: expect.any(String) });
    // Repeating it changes nothing (case-insensitively the same identifier).
    await alice.call("PATCH", "/profile", { peppolId: "0208:0123456749" });
    expect((await alice.call("PUT", "/profile/peppol-registration")).body).toEqual(registered.body);
    expect((await alice.call("GET", "/profile/peppol-registration")).body).toEqual(registered.body);
    expect(fake.legalEntities.size).toBe(1);
    const [entity] = [...fake.legalEntities.values()];
    expect(entity!.identifiers).toEqual(["BE:EN:0123456749"]);
    // The key never appears in a response.
    expect(JSON.stringify(registered.body)).not.toContain(fake.apiKey);
    // 2. incomplete: the buyer has no peppolId
    const incomplete = expectProblem(
      await alice.call("POST", `${path}/send`, { channel: "peppol" }),
      422,
      "e_invoice_incomplete",
    );
    expect(incomplete.errors!.map((e) => e.path)).toEqual(["client.peppolId"]);
    // 3. not on the network
    await alice.call("PATCH", `/clients/${buyerId}`, { peppolId: "0208:0999999823" });
    expectProblem(await alice.call("POST", `${path}/send`, { channel: "peppol" }), 422, "peppol_recipient_unreachable");
    expect(await snapshot(path)).toEqual(before);
    expect(fake.submissions).toEqual([]);
    // 4. on the network: sent, pending, handed over in the background
    fake.receivers.set("BE:EN:0999999823", "hold");
    const sent = await alice.call("POST", `${path}/send`, { channel: "peppol" });
    expect(sent.status).toBe(200);
    expect(sent.body.status).toBe("sent");
    expect(sent.body.peppolDelivery).toEqual({
      status: "pending",
      providerReference: null,
      error: null,
      updatedAt: sent.body.sentAt,
    });
    expect(fake.submissions).toEqual([]); // never inside the request
    await env.drainStream();
    expect(fake.submissions).toHaveLength(1);
    const submission = fake.submissions[0]!;
    expect(submission.receiver).toBe("BE:EN:0999999823");
    expect(submission.ubl).toContain('<cbc:EndpointID schemeID="0208">0123456749</cbc:EndpointID>');
    expect(submission.ubl).toContain('<cbc:EndpointID schemeID="0208">0999999823</cbc:EndpointID>');
    const handedOver = (await alice.call("GET", path)).body;
    expect(handedOver.peppolDelivery).toMatchObject({ status: "pending", providerReference: submission.guid });
    // No evidence yet: the job polls and waits.
    expect((await runPeppolJob(env.deps, new Date(env.clock.now.getTime() + 120_000))).changed).toBe(1);
    expect((await alice.call("GET", path)).body.peppolDelivery.status).toBe("pending");
    // Neither the page nor the PDF says "Sent via Peppol" before it is delivered.
    const pending = await documentsOf("invoices", invoice.id);
    expect(pending.html).not.toContain("Sent via Peppol");
    expect(pending.pdf).not.toContain("Sent via Peppol");
    // Delivered: the next poll sees the evidence.
    submission.delivered = true;
    await runPeppolJob(env.deps, new Date(env.clock.now.getTime() + 3_600_000));
    const delivered = (await alice.call("GET", path)).body;
    expect(delivered.peppolDelivery).toMatchObject({
      status: "delivered",
      providerReference: submission.guid,
      error: null,
    });
    await env.drainStream();
    expect(await eventTypes("invoice", invoice.id)).toEqual([
      "invoice.created",
      "invoice.finalized",
      "invoice.sent",
      "invoice.peppol_delivered",
    ]);
    writeReceived("invoice.xml", submission.ubl);
    // Now the page and the PDF say where it went; a later edit of the client's peppolId does not
    // change that (the delivery keeps the receiver it went to).
    await alice.call("PATCH", `/clients/${buyerId}`, { peppolId: "9925:BE0999999823" });
    const shown = await documentsOf("invoices", invoice.id);
    expect(shown.html).toContain('<p class="delivery" data-testid="delivery">Sent via Peppol to 0208:0999999823</p>');
    expect(shown.pdf).toContain("Sent via Peppol to 0208:0999999823");
    await alice.call("PATCH", `/clients/${buyerId}`, { peppolId: "0208:0999999823" });
  });

  it("a credit note over Peppol: delivered, credit_note.peppol_delivered", async () => {
    const invoice = await finalizedInvoice();
    const note = (await alice.call("POST", `/invoices/${invoice.id}/credit-notes`, { reason: "duplicate" })).body;
    fake.receivers.set("BE:EN:0999999823", "deliver");
    const sent = await alice.call("POST", `/credit-notes/${note.id}/send`, { channel: "peppol" });
    expect(sent.status).toBe(200);
    expect(sent.body.peppolDelivery.status).toBe("pending");
    await env.drainStream();
    const submission = fake.submissions.at(-1)!;
    expect(submission.ubl).toContain("<CreditNote xmlns=");
    await runPeppolJob(env.deps, new Date(env.clock.now.getTime() + 120_000));
    expect((await alice.call("GET", `/credit-notes/${note.id}`)).body.peppolDelivery.status).toBe("delivered");
    const shown = await documentsOf("credit-notes", note.id);
    expect(shown.html).toContain("Sent via Peppol to 0208:0999999823");
    expect(shown.pdf).toContain("Sent via Peppol to 0208:0999999823");
    await env.drainStream();
    expect(await eventTypes("credit_note", note.id)).toEqual([
      "credit_note.created",
      "credit_note.sent",
      "credit_note.peppol_delivered",
    ]);
    writeReceived("credit-note.xml", submission.ubl);
  });

  it("a refusal: failed with the provider's reason, invoice.peppol_failed", async () => {
    const other = (await alice.call("POST", "/clients", { ...BUYER, peppolId: "9925:BE0999999823" })).body;
    fake.receivers.set("BE:VAT:BE0999999823", "refuse");
    const invoice = await finalizedInvoice(other.id);
    expect((await alice.call("POST", `/invoices/${invoice.id}/send`, { channel: "peppol" })).status).toBe(200);
    await env.drainStream();
    const failed = (await alice.call("GET", `/invoices/${invoice.id}`)).body;
    expect(failed.peppolDelivery).toMatchObject({
      status: "failed",
      error: "The receiving access point rejected the document",
    });
    await env.drainStream();
    expect((await eventTypes("invoice", invoice.id)).at(-1)).toBe("invoice.peppol_failed");
    const shown = await documentsOf("invoices", invoice.id);
    expect(shown.html).not.toContain("Sent via Peppol");
    expect(shown.pdf).not.toContain("Sent via Peppol");
  });

  it("an outage: retried with backoff by the job, then delivered", async () => {
    const invoice = await finalizedInvoice();
    fake.receivers.set("BE:EN:0999999823", "deliver");
    expect((await alice.call("POST", `/invoices/${invoice.id}/send`, { channel: "peppol" })).status).toBe(200);
    const count = fake.submissions.length;
    fake.unavailableFor = 1;
    await env.drainStream(); // the first hand-over meets a 503
    expect(fake.submissions.length).toBe(count);
    expect((await alice.call("GET", `/invoices/${invoice.id}`)).body.peppolDelivery.status).toBe("pending");
    // Not due yet right away (backoff), due a minute later.
    expect((await runPeppolJob(env.deps, env.clock.now)).changed).toBe(0);
    await runPeppolJob(env.deps, new Date(env.clock.now.getTime() + 61_000));
    expect(fake.submissions.length).toBe(count + 1);
    await runPeppolJob(env.deps, new Date(env.clock.now.getTime() + 10 * 60_000));
    expect((await alice.call("GET", `/invoices/${invoice.id}`)).body.peppolDelivery.status).toBe("delivered");
  });

  /** A Peppol send of a new invoice, and its delivery record's key (the message the subscriber sends). */
  async function peppolSend(): Promise<{ id: number; message: WorkMessage; submissions: () => unknown[] }> {
    fake.receivers.set("BE:EN:0999999823", "hold");
    const invoice = await finalizedInvoice();
    expect((await alice.call("POST", `/invoices/${invoice.id}/send`, { channel: "peppol" })).status).toBe(200);
    const key = { pk: userPk(alice.userId), sk: `PEPPOL#INVOICE#${pad(invoice.id)}` };
    const before = fake.submissions.length; // nothing runs the stream here: no other hand-over comes
    return {
      id: invoice.id,
      message: { queue: "peppol", now: env.clock.now.toISOString(), userId: alice.userId, keys: [key] },
      submissions: () => fake.submissions.slice(before),
    };
  }
  const read = async (key: { pk: string; sk: string }) =>
    (await env.deps.db.doc.send(new GetCommand({ TableName: env.tableName, Key: key, ConsistentRead: true }))).Item!;
  const versionOf = async (id: number) => Number((await read(entityKey(alice.userId, "INVOICE", id))).version);

  it("the subscriber hands the send to the peppol queue, calling no provider; the worker hands it over once", async () => {
    const { id, message, submissions } = await peppolSend();
    const record = await read(message.keys[0]!);
    // The delivery record's INSERT as the stream gives it, to a subscriber whose queues are recorded
    // (as deployed: SQS takes the messages, a worker does them later).
    const sent: [QueueName, WorkMessage[]][] = [];
    const deployed = {
      ...env.deps,
      workQueue: { send: async (q: QueueName, m: readonly WorkMessage[]) => void sent.push([q, [...m]]) },
    };
    const outcome = await handleStreamBatch(deployed, [
      {
        eventID: "peppol-insert",
        eventName: "INSERT",
        dynamodb: {
          Keys: marshall(message.keys[0]!),
          NewImage: marshall(record),
          SequenceNumber: "1",
          ApproximateCreationDateTime: Math.floor(env.clock.now.getTime() / 1000),
        },
      },
    ]);
    expect(outcome.handedOff.peppol).toBe(1);
    expect(sent).toEqual([["peppol", [{ ...message, now: expect.any(String) }]]]);
    expect(submissions()).toEqual([]); // the subscriber itself called no provider
    // The worker takes the message: one hand-over, the reference on the invoice.
    expect((await peppolWorker(env.deps, sent[0]![1])).tally).toEqual({ changed: 1 });
    const [submission] = submissions() as typeof fake.submissions;
    expect(submissions()).toHaveLength(1);
    const invoice = (await alice.call("GET", `/invoices/${id}`)).body;
    expect(invoice.peppolDelivery).toMatchObject({ status: "pending", providerReference: submission!.guid });
    const version = await versionOf(id);
    // Given again, twice (SQS is at least once): handed over already, nothing more.
    expect(await peppolWorker(env.deps, [message, message])).toEqual({ tally: { skipped: 2 }, retry: [] });
    expect(submissions()).toHaveLength(1);
    expect(await versionOf(id)).toBe(version);
  });

  it("a peppol worker killed mid-item neither loses nor doubles the hand-over", async () => {
    const { id, message, submissions } = await peppolSend();
    const deps = { ...env.deps, db: faulty.db };
    const version = await versionOf(id);

    // 1. Killed after the provider took the document, before the worker's write reached the table.
    const down = faulty.proxy.inject({
      match: op("TransactWriteItems", "PEPPOL#"),
      fault: "server-error",
      times: Infinity,
    });
    const beforeWrite = await peppolWorker(deps, [message]);
    down.remove();
    expect(down.hits).toBeGreaterThan(0);
    expect(beforeWrite.retry).toEqual([message]); // given back: SQS hands it out again
    expect(submissions()).toHaveLength(1);
    // Not lost: still waiting for its first hand-over, and due for the job meanwhile.
    expect(await read(message.keys[0]!)).toMatchObject({ stage: "handover", attempts: 0, duePk: expect.any(String) });

    // 2. Killed after its write was applied, before it heard so: every answer cut off.
    const cut = faulty.proxy.inject({
      match: op("TransactWriteItems", "PEPPOL#"),
      fault: "reset-after-write",
      times: Infinity,
    });
    await peppolWorker(deps, [message]);
    cut.remove();
    expect(cut.hits).toBeGreaterThan(0);

    // The message comes again, twice: found handed over, nothing redone.
    expect(await peppolWorker(deps, [message, message])).toEqual({ tally: { skipped: 2 }, retry: [] });
    // One document at the provider (the second hand-over carried the same idempotency key), one
    // write of the outcome on the invoice.
    const [submission] = submissions() as typeof fake.submissions;
    expect(submissions()).toHaveLength(1);
    expect(await read(message.keys[0]!)).toMatchObject({ stage: "outcome", providerReference: submission!.guid });
    expect(await versionOf(id)).toBe(version + 1);
    const invoice = (await alice.call("GET", `/invoices/${id}`)).body;
    expect(invoice.peppolDelivery).toMatchObject({ status: "pending", providerReference: submission!.guid });
  });

  it("DELETE deregisters: 204, then 404; a send is then peppol_not_registered", async () => {
    expect((await alice.call("DELETE", "/profile/peppol-registration")).status).toBe(204);
    expectProblem(await alice.call("GET", "/profile/peppol-registration"), 404, "not_found");
    expect(fake.legalEntities.size).toBe(0);
    const invoice = await finalizedInvoice();
    expectProblem(
      await alice.call("POST", `/invoices/${invoice.id}/send`, { channel: "peppol" }),
      422,
      "peppol_not_registered",
    );
  });

  it("no request to the provider carried anything but its key in Authorization", () => {
    for (const r of fake.requests) {
      expect(r.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
      expect(JSON.stringify(r.body ?? {})).not.toContain(fake.apiKey);
    }
  });
});

const received = mkdtempSync(join(tmpdir(), "peppol-received-"));
mkdirSync(join(received, "docs"));
const writeReceived = (name: string, ubl: string) => writeFileSync(join(received, "docs", name), ubl);

describe.runIf(official)("what the provider received", () => {
  it("passes EN16931-UBL and PEPPOL-EN16931-UBL with no error", async () => {
    const runs = [OFFICIAL.enUbl, OFFICIAL.peppolUbl].map((xslt, n) => ({
      xslt: join(ARTEFACTS!, xslt),
      inputDir: join(received, "docs"),
      outputDir: join(received, `svrl-${n}`),
    }));
    const reports = await schematron(runs);
    expect(reports).toEqual([[], []]);
  });
});
