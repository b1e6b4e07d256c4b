import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runPeppolJob } from "@invoicing/core/peppol/delivery";
import { createStorecoveProvider } from "@invoicing/core/peppol/storecove";
import { writePeppolUbl } from "@invoicing/functions/capabilities/peppol-hand-over";
import { createTestEnv, type TestEnv, type TestUser } from "../support/env";
import { startFakeStorecove, type FakeStorecove } from "../support/fake-storecove";

/**
 * The `peppol` job does its hand-overs itself, one after the other, each a call to the provider of
 * up to 10 s (peppol/storecove.ts). Deployed, its deadline is the Lambda's end (1 minute): a
 * hand-over started a few seconds before it is cut off by the timeout (an Errors alarm, a
 * submission whose outcome is not recorded). So no hand-over starts later than the deadline less
 * the worst case of one; what is left stays due for the next run (every 5 minutes).
 * Nothing here is timed: a deadline 5 s away is inside that margin whatever the machine's speed.
 */
let fake: FakeStorecove;
let env: TestEnv;
let alice: TestUser;

beforeAll(async () => {
  fake = await startFakeStorecove();
  env = await createTestEnv({
    extraDeps: {
      peppol: createStorecoveProvider({ apiKey: fake.apiKey, apiBase: fake.url }),
      peppolUbl: writePeppolUbl,
    },
  });
  alice = await env.user();
  const profile = await alice.call("PATCH", "/profile", {
    businessName: "Atelier Bruxelles SRL",
    address: { line1: "Rue Neuve 12", city: "Bruxelles", postalCode: "1000", country: "BE" },
    taxId: "BE0123456749",
    email: "factures@atelier.be",
    bankAccount: { accountName: "Atelier Bruxelles SRL", iban: "BE68539007547034", bic: "GEBABEBB" },
    peppolId: "0208:0123456749",
  });
  expect(profile.status).toBe(200);
  expect((await alice.call("PUT", "/profile/peppol-registration")).status).toBe(200);
});

afterAll(() => fake?.close());

describe("the peppol job's deadline", () => {
  it("starts no hand-over within a hand-over's worst case of its deadline; the next run makes it", async () => {
    const client = await alice.call("POST", "/clients", {
      name: "Brasserie Namur SA",
      email: "compta@brasserie.be",
      currency: "EUR",
      taxId: "BE0999999823",
      address: { line1: "Place d'Armes 1", city: "Namur", postalCode: "5000", country: "BE" },
      peppolId: "0208:0999999823",
    });
    expect(client.status).toBe(201);
    const draft = await alice.call("POST", "/invoices", {
      clientId: client.body.id,
      lineItems: [{ description: "Webdesign", quantity: "12", unitPrice: "85.00", taxRate: "0.21" }],
      purchaseOrderReference: "PO-7",
    });
    expect((await alice.call("POST", `/invoices/${draft.body.id}/finalize`)).status).toBe(200);
    fake.receivers.set("BE:EN:0999999823", "hold");
    expect((await alice.call("POST", `/invoices/${draft.body.id}/send`, { channel: "peppol" })).status).toBe(200);
    // The stream is not drained: the subscriber's first hand-over has not run, the delivery is due.
    const now = new Date(env.clock.now.getTime() + 60_000);

    const late = await runPeppolJob(env.deps, now, { deadline: Date.now() + 5_000 });
    expect(late.changed).toBe(0);
    expect(fake.submissions).toHaveLength(0);

    expect((await runPeppolJob(env.deps, now)).changed).toBe(1);
    expect(fake.submissions).toHaveLength(1);
  });
});
