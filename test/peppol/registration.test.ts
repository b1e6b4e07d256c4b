import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStorecoveProvider } from "@invoicing/core/peppol/storecove";
import { createTestEnv, expectProblem, type TestEnv } from "../support/env";
import { startFakeStorecove, type FakeStorecove } from "../support/fake-storecove";

/**
 * The registration under concurrency and partial failure (API.md section 19, docs/peppol.md), over
 * HTTP against the Storecove stand-in (test/support/fake-storecove.ts) with the real adapter:
 * two PUTs at once leave one legal entity at the provider, and a changed `peppolId` whose new
 * registration fails after the old one was removed leaves no record claiming the old one.
 */
let fake: FakeStorecove;
let env: TestEnv;

const SELLER = {
  businessName: "Atelier Bruxelles SRL",
  address: { line1: "Rue Neuve 12", city: "Bruxelles", postalCode: "1000", country: "BE" },
  peppolId: "0208:0123456749",
};

beforeAll(async () => {
  fake = await startFakeStorecove();
  env = await createTestEnv({
    extraDeps: { peppol: createStorecoveProvider({ apiKey: fake.apiKey, apiBase: fake.url }) },
  });
});
afterAll(() => fake?.close());

describe("PUT /profile/peppol-registration", () => {
  it("two at once: one registers, the other is refused with 409; one legal entity at the provider", async () => {
    const alice = await env.user();
    expect((await alice.call("PATCH", "/profile", SELLER)).status).toBe(200);
    const before = fake.legalEntities.size;
    const answers = await Promise.all([
      alice.call("PUT", "/profile/peppol-registration"),
      alice.call("PUT", "/profile/peppol-registration"),
    ]);
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, 409]);
    expectProblem(answers.find((a) => a.status === 409)!, 409, "peppol_registration_in_progress");
    expect(fake.legalEntities.size - before).toBe(1);
    // Once the first is done, repeating it changes nothing.
    const again = await alice.call("PUT", "/profile/peppol-registration");
    expect(again.body).toEqual(answers.find((a) => a.status === 200)!.body);
    expect(fake.legalEntities.size - before).toBe(1);
  });

  it("a changed peppolId whose new registration fails after the old was removed: no record of the old", async () => {
    const bob = await env.user();
    expect((await bob.call("PATCH", "/profile", { ...SELLER, peppolId: "0208:0999999823" })).status).toBe(200);
    expect((await bob.call("PUT", "/profile/peppol-registration")).status).toBe(200);
    // The new identifier is registered with another access point: the provider refuses it.
    fake.takenIdentifiers.add("BE:VAT:BE0123456749");
    expect((await bob.call("PATCH", "/profile", { peppolId: "9925:BE0123456749" })).status).toBe(200);
    expectProblem(await bob.call("PUT", "/profile/peppol-registration"), 422, "invalid_transition");
    // The old one is gone at the provider, so the record does not say it is active.
    const owned = [...fake.legalEntities.values()].filter((e) => e.identifiers.includes("BE:EN:0999999823"));
    expect(owned).toEqual([]);
    expectProblem(await bob.call("GET", "/profile/peppol-registration"), 404, "not_found");
    // Nor is a half-registered new entity left behind.
    expect(
      [...fake.legalEntities.values()].filter(
        (e) => e.party_name === SELLER.businessName && e.identifiers.length === 0,
      ),
    ).toEqual([]);
    // Once the identifier is free, registering again works.
    fake.takenIdentifiers.clear();
    const registered = await bob.call("PUT", "/profile/peppol-registration");
    expect(registered.body).toMatchObject({ peppolId: "9925:BE0123456749", status: "active" });
  });
});

describe("a claim left by a request that died", () => {
  const claimKey = (userId: string) => ({ pk: `USER#${userId}`, sk: "PEPPOL_REGISTRATION_CLAIM" });
  const putClaim = (userId: string, expiresAt: number | string) =>
    env.deps.db.doc.send(
      new PutCommand({ TableName: env.tableName, Item: { ...claimKey(userId), token: "dead", expiresAt } }),
    );
  const nowSeconds = () => Math.floor(env.clock.now.getTime() / 1000);

  it("refuses with 409 until it runs out, then is taken over; its end in epoch seconds, the table's TTL", async () => {
    const carol = await env.user();
    expect((await carol.call("PATCH", "/profile", { ...SELLER, peppolId: "0208:0555555523" })).status).toBe(200);
    await putClaim(carol.userId, nowSeconds() + 30);
    expectProblem(await carol.call("PUT", "/profile/peppol-registration"), 409, "peppol_registration_in_progress");
    env.clock.advance(31_000);
    expect((await carol.call("PUT", "/profile/peppol-registration")).status).toBe(200);
    // Taken over and given back: no claim is left.
    const left = await env.deps.db.doc.send(new GetCommand({ TableName: env.tableName, Key: claimKey(carol.userId) }));
    expect(left.Item).toBeUndefined();
  });

  it("one written before the TTL (its end an ISO string) is compared as one", async () => {
    const dave = await env.user();
    expect((await dave.call("PATCH", "/profile", { ...SELLER, peppolId: "0208:0666666647" })).status).toBe(200);
    await putClaim(dave.userId, new Date(env.clock.now.getTime() + 30_000).toISOString());
    expectProblem(await dave.call("PUT", "/profile/peppol-registration"), 409, "peppol_registration_in_progress");
    env.clock.advance(31_000);
    expect((await dave.call("PUT", "/profile/peppol-registration")).status).toBe(200);
  });
});
