import { beforeAll, describe, expect, it } from "vitest";
import { hasGs1CheckDigit, peppolIdProblem, samePeppolId } from "@invoicing/core/peppol/participant-id";
import { createTestEnv, expectProblem, type TestEnv, type TestUser } from "../support/env";

/**
 * Peppol participant identifiers (API.md section 19): the scheme list and the checks schemes define,
 * as a 400 on `peppolId` of the profile and of clients; compared case-insensitively, returned as stored.
 */
const VALID = [
  "0208:0123456749", // Belgian enterprise number: 97 − (01234567 mod 97) = 49
  "0208:0999999823", // 97 − (09999998 mod 97) = 23
  "0088:5790000435975", // GLN with its GS1 check digit
  "0088:4000001000005",
  "9925:BE0123456749", // Belgian VAT: BE + the enterprise number
  "9925:be0123456749", // any case
  "9930:DE123456789",
  "9957:FR40303265045",
  "9944:NL123456789B01",
  "0192:987654325", // Norwegian organisation number, mod 11
  "0007:5560360793", // Swedish organisation number, Luhn
  "0106:12345678", // Dutch KvK: no check defined
  "0009:73282932000074", // SIRET
  "0204:991-12345-67", // Leitweg-ID
  "9918:DE89370400440532013000", // IBAN
];

const INVALID: [string, RegExp][] = [
  ["0208:0123456748", /97 minus/], // wrong check digits
  ["0208:123456749", /97 minus/], // 9 digits
  ["0088:5790000435976", /GS1 check digit/],
  ["0088:579000043597", /GS1 check digit/], // 12 digits
  ["9925:DE0123456749", /starting with BE/],
  ["9925:BE0123456748", /mod-97/],
  ["9930:DE12345678", /VAT number of DE/],
  ["9930:123456789", /starting with DE/],
  ["9944:NL123456789", /VAT number of NL/],
  ["9956:0123456749", /scheme list/], // removed from the list
  ["1234:abc", /scheme list/],
  ["EM:a@b.test", /4-digit scheme/],
  ["0106:", /1 to 50/],
  ["0106:1234 5678", /spaces/],
  [`0106:${"1".repeat(51)}`, /1 to 50/],
  ["0192:987654321", /mod-11/],
  ["0007:5560360794", /Luhn/],
  ["0208", /4-digit scheme/],
];

describe("peppolIdProblem", () => {
  it.each(VALID)("accepts %s", (id) => expect(peppolIdProblem(id)).toBeNull());
  it.each(INVALID)("refuses %s", (id, why) => expect(peppolIdProblem(id)).toMatch(why));
  it("computes GS1 check digits", () => {
    expect(hasGs1CheckDigit("5790000435975")).toBe(true);
    expect(hasGs1CheckDigit("5790000435970")).toBe(false);
  });
  it("compares case-insensitively", () => {
    expect(samePeppolId("9925:be0123456749", "9925:BE0123456749")).toBe(true);
    expect(samePeppolId("9925:BE0123456749", "0208:0123456749")).toBe(false);
    expect(samePeppolId(null, null)).toBe(false);
  });
});

describe("peppolId over HTTP", () => {
  let env: TestEnv;
  let alice: TestUser;
  beforeAll(async () => {
    env = await createTestEnv();
    alice = await env.user();
  });

  it("is null until set, then returned as stored, on the profile", async () => {
    expect((await alice.call("GET", "/profile")).body.peppolId).toBeNull();
    const res = await alice.call("PATCH", "/profile", { peppolId: "9925:be0123456749" });
    expect(res.status).toBe(200);
    expect(res.body.peppolId).toBe("9925:be0123456749");
    expect((await alice.call("GET", "/profile")).body.peppolId).toBe("9925:be0123456749");
    expect((await alice.call("PATCH", "/profile", { peppolId: null })).body.peppolId).toBeNull();
  });

  it("is set on clients at creation and by PATCH, null clears it", async () => {
    const created = await alice.call("POST", "/clients", { name: "Buyer", peppolId: "0208:0999999823" });
    expect(created.status).toBe(201);
    expect(created.body.peppolId).toBe("0208:0999999823");
    const id = created.body.id;
    expect((await alice.call("PATCH", `/clients/${id}`, { peppolId: "0088:5790000435975" })).body.peppolId).toBe(
      "0088:5790000435975",
    );
    expect((await alice.call("GET", `/clients/${id}`)).body.peppolId).toBe("0088:5790000435975");
    expect((await alice.call("PATCH", `/clients/${id}`, { peppolId: null })).body.peppolId).toBeNull();
  });

  it("refuses an unknown scheme or a failed check with 400 on peppolId, changing nothing", async () => {
    for (const [bad] of INVALID.slice(0, 6)) {
      const profile = await alice.call("PATCH", "/profile", { peppolId: bad, phone: "+32 2 555 01 01" });
      expectProblem(profile, 400, "validation_error");
      expect(profile.body.errors.map((e: { path: string }) => e.path)).toEqual(["peppolId"]);
      const client = await alice.call("POST", "/clients", { name: "X", peppolId: bad });
      expectProblem(client, 400, "validation_error");
      expect(client.body.errors.map((e: { path: string }) => e.path)).toEqual(["peppolId"]);
    }
    expect((await alice.call("GET", "/profile")).body.phone).toBeNull();
    expectProblem(await alice.call("POST", "/clients", { name: "X", peppolId: 208 }), 400, "validation_error");
  });
});
