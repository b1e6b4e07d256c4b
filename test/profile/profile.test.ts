import { readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { extractText, getDocumentProxy } from "unpdf";
import { beforeAll, describe, expect, it } from "vitest";
import { createTestEnv, expectProblem, type TestEnv, type TestUser } from "../support/env";
import { FRENCH_CLIENT, SELLER } from "../support/documents";
import { makePng } from "../support/images";

let env: TestEnv;
let alice: TestUser;

const FIXTURES = join(import.meta.dirname, "../fixtures");
const LOGO_PNG = readFileSync(join(FIXTURES, "logo.png"));
const LOGO_JPG = readFileSync(join(FIXTURES, "logo.jpg"));

beforeAll(async () => {
  env = await createTestEnv();
  alice = await env.user();
});

const EMPTY_PROFILE = {
  businessName: null,
  legalName: null,
  address: null,
  taxId: null,
  companyId: null,
  contactName: null,
  email: null,
  phone: null,
  website: null,
  bankAccount: null,
  defaultCurrency: "USD",
  defaultPaymentTermsDays: 30,
  defaultNotes: null,
  defaultTerms: null,
  footer: null,
  hasLogo: false,
  peppolId: null,
  updatedAt: null,
};

/** Every field of the profile: the documents tests' seller, its IBAN typed the way people write it. */
const FULL = {
  ...SELLER,
  bankAccount: { ...SELLER.bankAccount, iban: "de89 3704 0044 0532 0130 00" },
  defaultCurrency: "EUR",
  defaultPaymentTermsDays: 14,
  defaultNotes: "Thank you for your business.",
  defaultTerms: "Payable within 14 days.",
};

/** A raw request (binary body, any content type) as alice. */
async function raw(method: string, path: string, body?: Uint8Array, type?: string) {
  const headers: Record<string, string> = { Authorization: `Bearer ${alice.key}` };
  if (type) headers["Content-Type"] = type;
  return env.app.request(`http://localhost${path}`, { method, headers, body: body as BodyInit | undefined });
}

describe("business profile", () => {
  it('exists for every user: nulls and defaults, ETag "0"', async () => {
    const bob = await env.user();
    const res = await bob.call("GET", "/profile");
    expect(res.status).toBe(200);
    expect(res.body).toEqual(EMPTY_PROFILE);
    expect(res.headers.get("etag")).toBe('"0"');
  });

  it("PATCH sets, normalizes the IBAN, honours If-Match, {} changes nothing, null clears", async () => {
    const carol = await env.user();
    const res = await carol.call("PATCH", "/profile", FULL, { "If-Match": '"0"' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...FULL,
      address: { ...SELLER.address, region: null },
      bankAccount: { ...SELLER.bankAccount, iban: "DE89370400440532013000" },
      website: FULL.website,
      hasLogo: false,
      peppolId: null,
      updatedAt: "2026-11-22T09:30:00.000Z",
    });
    expect(res.headers.get("etag")).toBe('"1"');
    expectProblem(
      await carol.call("PATCH", "/profile", { phone: "1" }, { "If-Match": '"0"' }),
      412,
      "precondition_failed",
    );
    const noop = await carol.call("PATCH", "/profile", {});
    expect(noop.headers.get("etag")).toBe('"1"');
    const cleared = await carol.call("PATCH", "/profile", { bankAccount: null, legalName: null });
    expect(cleared.body).toMatchObject({ bankAccount: null, legalName: null, businessName: "Northwind Studio" });
    expect((await carol.call("GET", "/profile")).body).toEqual(cleared.body);
  });

  it("returns and prints the website exactly as given: validated, not rewritten", async () => {
    const gina = await env.user();
    const website = "https://www.acme-shop.example.org";
    const patched = await gina.call("PATCH", "/profile", { businessName: "Acme Shop", website });
    expect(patched.status).toBe(200);
    expect(patched.body.website).toBe(website);
    expect((await gina.call("GET", "/profile")).body.website).toBe(website);
    const clientId = (await gina.call("POST", "/clients", { name: "Buyer", email: "ap@buyer.test" })).body.id;
    const draft = await gina.call("POST", "/invoices", {
      clientId,
      lineItems: [{ description: "Work", unitPrice: "10.00" }],
    });
    const invoice = (await gina.call("POST", `/invoices/${draft.body.id}/finalize`)).body;
    expect(invoice.seller.website).toBe(website);
    // Printed on the public page and the PDF as typed, never with the parser's trailing slash.
    const page = await (await env.app.request(`http://localhost/public/invoices/${invoice.publicToken}`)).text();
    expect(page).toContain(website);
    expect(page).not.toContain(`${website}/`);
    const pdf = await (
      await env.app.request(`http://localhost/public/invoices/${invoice.publicToken}/pdf`)
    ).arrayBuffer();
    const { text } = await extractText(await getDocumentProxy(new Uint8Array(pdf)), { mergePages: true });
    expect(text).toContain(website);
    expect(text).not.toContain(`${website}/`);
  });

  // Issue 29, finding 5: a line break in the business name reached email headers and PDF lines.
  it("single-line fields refuse control characters (U+0000–U+001F, U+007F); other text keeps them", async () => {
    const erin = await env.user();
    const fields = ["businessName", "legalName", "contactName", "taxId", "companyId", "phone"];
    for (const field of fields) {
      for (const bad of ["Evil\r\nBcc: all@example.com", "tab\there", "nul\u0000", "del\u007f", "\u001b[31m"]) {
        const problem = expectProblem(await erin.call("PATCH", "/profile", { [field]: bad }), 400, "validation_error");
        expect(problem.errors, `${field} ${JSON.stringify(bad)}`).toEqual([
          { path: field, message: "must be one line without control characters" },
        ]);
      }
    }
    expect((await erin.call("GET", "/profile")).body).toEqual(EMPTY_PROFILE);
    const ok = await erin.call("PATCH", "/profile", {
      businessName: "Müller GmbH — Zürich «Ost» 東京",
      footer: "Line one\nLine two",
      defaultNotes: "Thanks!\n\tSee you",
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ businessName: "Müller GmbH — Zürich «Ost» 東京", footer: "Line one\nLine two" });
  });

  it("refuses bad input with the field's path, changing nothing", async () => {
    const dave = await env.user();
    const cases: [Record<string, unknown>, string][] = [
      [{ businessName: "" }, "businessName"],
      [{ businessName: 5 }, "businessName"],
      [{ businessName: "x".repeat(201) }, "businessName"],
      [{ address: { line1: "1 Road", country: "XX" } }, "address.country"],
      [{ address: { line1: "1 Road", country: "de" } }, "address.country"],
      [{ address: { line1: "1 Road" } }, "address.country"],
      [{ address: { country: "DE", street: "x" } }, "address.street"],
      [{ bankAccount: { iban: "DE89 3704 0044 0532 0130 01" } }, "bankAccount.iban"], // check digits
      [{ bankAccount: { iban: "DE89 3704 0044 0532 0130" } }, "bankAccount.iban"], // length for DE
      [{ bankAccount: { iban: "QQ89370400440532013000" } }, "bankAccount.iban"], // no such country
      [{ bankAccount: { iban: "DE89370400440532013000", bic: "COBADEFFX" } }, "bankAccount.bic"], // 9 characters
      [{ website: "http://northwind.test" }, "website"],
      [{ email: "nope" }, "email"],
      [{ defaultCurrency: "XYZ" }, "defaultCurrency"],
      [{ defaultPaymentTermsDays: 366 }, "defaultPaymentTermsDays"],
      [{ footer: "x".repeat(1001) }, "footer"],
      [{ hasLogo: true }, "hasLogo"],
      [{ taxId: "x".repeat(51) }, "taxId"],
    ];
    for (const [body, path] of cases) {
      const problem = expectProblem(
        await dave.call("PATCH", "/profile", { businessName: "Kept out", ...body }),
        400,
        "validation_error",
      );
      expect(
        problem.errors!.map((e) => e.path),
        JSON.stringify(body),
      ).toContain(path);
    }
    // A value that is not an object where an Address or bank account belongs: one error, at the field.
    for (const [field, value] of [
      ["address", ["x"]],
      ["address", "Main St"],
      ["bankAccount", ["DE89370400440532013000"]],
    ] as const) {
      const problem = expectProblem(await dave.call("PATCH", "/profile", { [field]: value }), 400, "validation_error");
      expect(problem.errors, JSON.stringify(value)).toEqual([{ path: field, message: "expected an object" }]);
    }
    expect((await dave.call("GET", "/profile")).body).toEqual(EMPTY_PROFILE);
    // Valid IBANs of other countries (lengths differ) pass.
    for (const iban of [
      "GB82 WEST 1234 5698 7654 32",
      "NL91ABNA0417164300",
      "FR1420041010050500013M02606",
      "NO9386011117947",
    ]) {
      expect((await dave.call("PATCH", "/profile", { bankAccount: { iban } })).status, iban).toBe(200);
    }
  });

  it("gives new clients its default currency and payment terms", async () => {
    const erin = await env.user();
    await erin.call("PATCH", "/profile", { defaultCurrency: "EUR", defaultPaymentTermsDays: 10 });
    const client = await erin.call("POST", "/clients", { name: "Acme" });
    expect(client.body).toMatchObject({ currency: "EUR", paymentTermsDays: 10 });
    const explicit = await erin.call("POST", "/clients", { name: "Other", currency: "GBP", paymentTermsDays: 0 });
    expect(explicit.body).toMatchObject({ currency: "GBP", paymentTermsDays: 0 });
  });
});

describe("logo", () => {
  it("stores a PNG and a JPEG checked by their bytes; GET returns them; DELETE removes", async () => {
    expectProblem(await alice.call("GET", "/profile/logo"), 404, "not_found");
    const put = await raw("PUT", "/profile/logo", LOGO_PNG, "image/png");
    expect(put.status).toBe(204);
    expect((await alice.call("GET", "/profile")).body.hasLogo).toBe(true);
    const got = await raw("GET", "/profile/logo");
    expect(got.status).toBe(200);
    expect(got.headers.get("content-type")).toBe("image/png");
    expect(Buffer.from(await got.arrayBuffer()).equals(LOGO_PNG)).toBe(true);

    expect((await raw("PUT", "/profile/logo", LOGO_JPG, "image/jpeg")).status).toBe(204);
    const jpg = await raw("GET", "/profile/logo");
    expect(jpg.headers.get("content-type")).toBe("image/jpeg");
    expect(Buffer.from(await jpg.arrayBuffer()).equals(LOGO_JPG)).toBe(true);

    expect((await raw("DELETE", "/profile/logo")).status).toBe(204);
    expect((await alice.call("GET", "/profile")).body.hasLogo).toBe(false);
    expectProblem(await alice.call("GET", "/profile/logo"), 404, "not_found");
  });

  it("refuses what is not a whole PNG or JPEG within 2000 × 2000 (400), other types (415), > 256 KiB (413)", async () => {
    const gif = Buffer.concat([Buffer.from("GIF89a"), randomBytes(100)]);
    const pngHeaderOnNoise = Buffer.concat([LOGO_PNG.subarray(0, 33), randomBytes(500)]);
    const truncated = LOGO_PNG.subarray(0, LOGO_PNG.length - 20);
    const corrupted = Buffer.from(LOGO_PNG);
    corrupted[200] = corrupted[200]! ^ 0xff; // inside the image data: its CRC no longer matches
    const cases: [Uint8Array, string][] = [
      [gif, "image/png"],
      [gif, "image/jpeg"],
      [pngHeaderOnNoise, "image/png"],
      [truncated, "image/png"],
      [corrupted, "image/png"],
      [LOGO_PNG, "image/jpeg"], // a PNG declared as JPEG
      [Buffer.concat([Buffer.from([0xff, 0xd8]), randomBytes(300), Buffer.from([0xff, 0xd9])]), "image/jpeg"],
      [makePng(2001, 10), "image/png"],
      [makePng(10, 2001), "image/png"],
      [Buffer.alloc(0), "image/png"],
    ];
    for (const [bytes, type] of cases) {
      const res = await raw("PUT", "/profile/logo", bytes, type);
      expect(res.status, `${type} ${bytes.length}`).toBe(400);
      expect((await res.json()).code).toBe("validation_error");
    }
    expect((await raw("PUT", "/profile/logo", makePng(2000, 2000), "image/png")).status).toBe(204);
    expect((await raw("PUT", "/profile/logo", LOGO_PNG, "text/plain")).status).toBe(415);
    expect((await raw("PUT", "/profile/logo", LOGO_PNG, "image/gif")).status).toBe(415);
    expect((await raw("PUT", "/profile/logo", LOGO_PNG)).status).toBe(415);
    const big = Buffer.concat([LOGO_PNG, Buffer.alloc(256 * 1024)]);
    expect((await raw("PUT", "/profile/logo", big, "image/png")).status).toBe(413);
    expect((await raw("PUT", "/profile/logo", big, "text/plain")).status).toBe(413);
    // The last good upload is what stays.
    const kept = await raw("GET", "/profile/logo");
    expect(kept.headers.get("content-type")).toBe("image/png");
  });
});

describe("client addresses and tax ids", () => {
  it("takes a structured address (replaced whole) and a taxId; refuses bad ones by path", async () => {
    const { name, taxId, address } = FRENCH_CLIENT;
    const created = await alice.call("POST", "/clients", { name, taxId, address });
    expect(created.status).toBe(201);
    expect(created.body.address).toEqual({ ...address, line2: null, region: null }); // every field, null if not given
    expect(created.body.taxId).toBe(taxId);
    const patched = await alice.call("PATCH", `/clients/${created.body.id}`, {
      address: { country: "BE", city: "Bruxelles" },
    });
    expect(patched.body.address).toEqual({
      line1: null,
      line2: null,
      city: "Bruxelles",
      postalCode: null,
      region: null,
      country: "BE",
    });
    const cleared = await alice.call("PATCH", `/clients/${created.body.id}`, { address: null, taxId: null });
    expect(cleared.body).toMatchObject({ address: null, taxId: null });

    for (const [body, path] of [
      [{ address: "1 Main St" }, "address"],
      [{ address: { line1: "x", country: "XX" } }, "address.country"],
      [{ address: { line1: "", country: "DE" } }, "address.line1"],
      [{ address: { city: "x".repeat(201), country: "DE" } }, "address.city"],
      [{ taxId: "" }, "taxId"],
      [{ taxId: "x".repeat(51) }, "taxId"],
    ] as const) {
      const problem = expectProblem(
        await alice.call("POST", "/clients", { name: "Bad", ...body }),
        400,
        "validation_error",
      );
      expect(problem.errors!.map((e) => e.path)).toContain(path);
    }
  });
});
