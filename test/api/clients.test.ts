import { beforeAll, describe, expect, it } from "vitest";
import { createTestEnv, expectProblem, type TestEnv, type TestUser } from "../support/env";

let env: TestEnv;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  env = await createTestEnv();
  alice = await env.user();
  bob = await env.user();
});

describe("clients", () => {
  it("creates with defaults, Location and every field present", async () => {
    const res = await alice.call("POST", "/clients", { name: "Acme" });
    expect(res.status).toBe(201);
    expect(res.headers.get("location")).toBe(`/clients/${res.body.id}`);
    expect(res.body).toEqual({
      id: res.body.id,
      name: "Acme",
      email: null,
      currency: "USD",
      paymentTermsDays: 30,
      address: null,
      taxId: null,
      peppolId: null,
      createdAt: "2026-11-22T09:30:00.000Z",
      updatedAt: "2026-11-22T09:30:00.000Z",
    });
  });

  it("allocates ids per user starting at 1", async () => {
    const carol = await env.user();
    const first = await carol.call("POST", "/clients", { name: "One" });
    const second = await carol.call("POST", "/clients", { name: "Two" });
    expect([first.body.id, second.body.id]).toEqual([1, 2]);
  });

  it("validates strictly, naming each bad field", async () => {
    const res = await alice.call("POST", "/clients", {
      name: "",
      email: "not-an-email",
      currency: "XYZ",
      paymentTermsDays: "30",
      id: 5,
    });
    const body = expectProblem(res, 400, "validation_error");
    expect(body.errors!.map((e) => e.path).sort()).toEqual(["currency", "email", "id", "name", "paymentTermsDays"]);
    const missing = expectProblem(await alice.call("POST", "/clients", {}), 400, "validation_error");
    expect(missing.errors).toEqual([{ path: "name", message: "is required" }]);
    expectProblem(await alice.call("POST", "/clients", []), 400, "validation_error");
    expectProblem(await alice.call("POST", "/clients", { name: "x", paymentTermsDays: 366 }), 400, "validation_error");
  });

  it("no control character (U+0000–U+001F, U+007F) in any email input: 400 on that field, nothing written", async () => {
    const dana = await env.user();
    const bad = ["a\u0000b@x.example", "a@x.example\r\nBcc: c@y.example", "a\u001fb@x.example", "a\u007fb@x.example"];
    const fieldsOf = (res: Awaited<ReturnType<TestUser["call"]>>) =>
      expectProblem(res, 400, "validation_error").errors!.map((e) => e.path);
    const client = (await dana.call("POST", "/clients", { name: "Acme", email: "ap@acme.example" })).body;
    const estimate = (
      await dana.call("POST", "/estimates", {
        clientId: client.id,
        lineItems: [{ description: "x", unitPrice: "1.00" }],
      })
    ).body;
    const draft = (
      await dana.call("POST", "/invoices", {
        clientId: client.id,
        lineItems: [{ description: "x", unitPrice: "1.00" }],
      })
    ).body;
    expect((await dana.call("POST", `/invoices/${draft.id}/finalize`)).status).toBe(200);
    const note = (await dana.call("POST", `/invoices/${draft.id}/credit-notes`, {})).body;
    expect(note.creditNoteNumber).toBe("CN-000001");
    for (const email of bad) {
      expect(fieldsOf(await dana.call("POST", "/clients", { name: "Evil", email })), email).toContain("email");
      expect(fieldsOf(await dana.call("PATCH", `/clients/${client.id}`, { email })), email).toContain("email");
      expect(fieldsOf(await dana.call("PATCH", "/profile", { email })), email).toContain("email");
      for (const path of [
        `/invoices/${draft.id}/send`,
        `/estimates/${estimate.id}/send`,
        `/credit-notes/${note.id}/send`,
      ])
        expect(fieldsOf(await dana.call("POST", path, { to: email })), `${path} ${email}`).toContain("to");
    }
    // Nothing written: one client, its email, the profile's, and nothing sent.
    const clients = (await dana.call("GET", "/clients")).body;
    expect(clients.map((c: { email: string }) => c.email)).toEqual(["ap@acme.example"]);
    expect((await dana.call("GET", "/profile")).body.email).toBeNull();
    expect((await dana.call("GET", `/invoices/${draft.id}`)).body.status).toBe("void");
    expect((await dana.call("GET", `/credit-notes/${note.id}`)).body.sentAt).toBeNull();
    expect((await dana.call("GET", `/estimates/${estimate.id}`)).body.status).toBe("draft");
  });

  it("an address that is not an object is one error, at address", async () => {
    const { body: client } = await alice.call("POST", "/clients", { name: "Addressed" });
    for (const address of [["x"], [], "Main St", 5]) {
      for (const res of [
        await alice.call("POST", "/clients", { name: "A", address }),
        await alice.call("PATCH", `/clients/${client.id}`, { address }),
      ]) {
        const problem = expectProblem(res, 400, "validation_error");
        expect(problem.errors, JSON.stringify(address)).toEqual([{ path: "address", message: "expected an object" }]);
      }
    }
    // Inside an object it is still an object's fields that are checked.
    const inner = expectProblem(
      await alice.call("POST", "/clients", { name: "A", address: { line1: ["x"], country: "DE" } }),
      400,
      "validation_error",
    );
    expect(inner.errors!.map((e) => e.path)).toEqual(["address.line1"]);
  });

  it("patches fields, clears nullable ones, treats {} as a no-op", async () => {
    const created = await alice.call("POST", "/clients", {
      name: "Old",
      email: "a@b.co",
      address: { line1: "1 Road", city: "Town", country: "GB" },
    });
    env.clock.advance(1000);
    const patched = await alice.call("PATCH", `/clients/${created.body.id}`, {
      name: "New",
      email: null,
      paymentTermsDays: 14,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      name: "New",
      email: null,
      paymentTermsDays: 14,
      address: { line1: "1 Road", line2: null, city: "Town", postalCode: null, region: null, country: "GB" },
    });
    expect(patched.body.updatedAt).not.toBe(created.body.updatedAt);
    env.clock.advance(1000);
    const noop = await alice.call("PATCH", `/clients/${created.body.id}`, {});
    expect(noop.status).toBe(200);
    // Nothing changed: the same body (updatedAt included) and the same version (ETag), then and after.
    expect(noop.body).toEqual(patched.body);
    expect(noop.headers.get("etag")).toBe(patched.headers.get("etag"));
    const read = await alice.call("GET", `/clients/${created.body.id}`);
    expect(read.body.updatedAt).toBe(patched.body.updatedAt);
    expect(read.headers.get("etag")).toBe(patched.headers.get("etag"));
    expectProblem(await alice.call("PATCH", `/clients/${created.body.id}`, { name: null }), 400, "validation_error");
    expectProblem(await alice.call("PATCH", `/clients/${created.body.id}`, { bogus: 1 }), 400, "validation_error");
    const stale = await alice.call("PATCH", `/clients/${created.body.id}`, { name: "X" }, { "If-Match": '"1"' });
    expectProblem(stale, 412, "precondition_failed");
  });

  it("deletes, then 404", async () => {
    const created = await alice.call("POST", "/clients", { name: "Gone" });
    expect((await alice.call("DELETE", `/clients/${created.body.id}`)).status).toBe(204);
    expectProblem(await alice.call("GET", `/clients/${created.body.id}`), 404, "not_found");
    expectProblem(await alice.call("DELETE", `/clients/${created.body.id}`), 404, "not_found");
  });

  it("keeps users apart: lists and ids", async () => {
    const mine = await alice.call("POST", "/clients", { name: "Private" });
    const list = await bob.call("GET", "/clients");
    expect(list.body).toEqual([]);
    for (const [method, body] of [["GET"], ["PATCH", { name: "hijack" }], ["DELETE"]] as const) {
      expectProblem(await bob.call(method, `/clients/${mine.body.id}`, body), 404, "not_found");
    }
    expect((await alice.call("GET", `/clients/${mine.body.id}`)).body.name).toBe("Private");
  });
});

describe("pagination", () => {
  it("pages newest first with Link and cursor, and validates parameters", async () => {
    const dave = await env.user();
    for (let i = 1; i <= 7; i++) await dave.call("POST", "/clients", { name: `C${i}` });
    const all = await dave.call("GET", "/clients");
    expect(all.body.map((c: { name: string }) => c.name)).toEqual(["C7", "C6", "C5", "C4", "C3", "C2", "C1"]);
    expect(all.headers.get("link")).toBeNull();

    const first = await dave.call("GET", "/clients?limit=3&foo=bar");
    expect(first.body.map((c: { name: string }) => c.name)).toEqual(["C7", "C6", "C5"]);
    const link = /^<([^>]+)>; rel="next"$/.exec(first.headers.get("link") ?? "");
    expect(link).not.toBeNull();
    const next = new URL(link![1]!);
    expect(next.searchParams.get("offset")).toBe("3");
    expect(next.searchParams.get("limit")).toBe("3");
    expect(next.searchParams.get("foo")).toBe("bar");
    expect(next.searchParams.get("cursor")).toBeTruthy();

    const second = await dave.call("GET", `${next.pathname}${next.search}`);
    expect(second.body.map((c: { name: string }) => c.name)).toEqual(["C4", "C3", "C2"]);
    const byOffset = await dave.call("GET", "/clients?limit=3&offset=3");
    expect(byOffset.body).toEqual(second.body);
    const last = await dave.call("GET", "/clients?limit=3&offset=6");
    expect(last.body.map((c: { name: string }) => c.name)).toEqual(["C1"]);
    expect(last.headers.get("link")).toBeNull();

    // A cursor made for another offset, or garbage, is ignored: offset decides.
    const cursor = next.searchParams.get("cursor")!;
    const mismatched = await dave.call("GET", `/clients?limit=3&offset=0&cursor=${cursor}`);
    expect(mismatched.body).toEqual(first.body);
    const garbage = await dave.call("GET", "/clients?limit=3&offset=3&cursor=%%%garbage");
    expect(garbage.body).toEqual(second.body);

    for (const q of ["limit=201", "limit=0", "offset=-1", "limit=abc", "limit=1.5"]) {
      expectProblem(await dave.call("GET", `/clients?${q}`), 400, "validation_error");
    }
  });

  it("a cursor from another user's list reveals nothing of theirs", async () => {
    const erin = await env.user();
    const frank = await env.user();
    for (let i = 1; i <= 4; i++) await erin.call("POST", "/clients", { name: `E${i}` });
    const page = await erin.call("GET", "/clients?limit=2");
    const next = new URL(/<([^>]+)>/.exec(page.headers.get("link")!)![1]!);
    const stolen = await frank.call("GET", `${next.pathname}${next.search}`);
    expect(stolen.status).toBe(200);
    expect(stolen.body).toEqual([]);
  });
});
