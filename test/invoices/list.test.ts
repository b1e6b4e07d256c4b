import { beforeAll, describe, expect, it } from "vitest";
import { createTestEnv, expectProblem, type TestEnv, type TestUser } from "../support/env";
import { newClient, newInvoice, ok } from "./fixtures";

/** GET /invoices: filters by status and client, newest first, pagination. */

let env: TestEnv;
let alice: TestUser;
let acme: number;
let globex: number;
/** Alice's invoices by id, with the status and client each was left in. */
const made: { id: number; status: string; clientId: number }[] = [];

const ids = (body: { id: number }[]) => body.map((invoice) => invoice.id);
const expected = (keep: (m: (typeof made)[number]) => boolean) =>
  made
    .filter(keep)
    .map((m) => m.id)
    .sort((a, b) => b - a);

beforeAll(async () => {
  env = await createTestEnv();
  alice = await env.user();
  acme = (await newClient(alice, { name: "Acme" })).id;
  globex = (await newClient(alice, { name: "Globex" })).id;
  // 12 invoices: client alternating, statuses draft / finalized / void in turn.
  for (let i = 0; i < 12; i++) {
    const clientId = i % 2 === 0 ? acme : globex;
    const { id } = await newInvoice(alice, { clientId });
    let status = "draft";
    if (i % 3 === 1) status = ok(await alice.call("POST", `/invoices/${id}/finalize`)).body.status;
    if (i % 3 === 2) status = ok(await alice.call("POST", `/invoices/${id}/void`)).body.status;
    made.push({ id, status, clientId });
  }
  // Another user's records with the same ids and client ids must never show up.
  const bob = await env.user();
  for (let c = 0; c < 4; c++) {
    const clientId = (await newClient(bob)).id;
    await newInvoice(bob, { clientId });
  }
});

describe("GET /invoices", () => {
  it("lists all of the user's invoices, newest first", async () => {
    const res = ok(await alice.call("GET", "/invoices"));
    expect(ids(res.body)).toEqual(expected(() => true));
    expect(res.headers.get("link")).toBeNull();
  });

  it.each(["draft", "finalized", "void", "sent", "paid", "overdue"])("filters by status=%s", async (status) => {
    const res = ok(await alice.call("GET", `/invoices?status=${status}`));
    expect(ids(res.body)).toEqual(expected((m) => m.status === status));
    for (const invoice of res.body) expect(invoice.status).toBe(status);
  });

  it("filters by clientId", async () => {
    for (const clientId of [acme, globex]) {
      const res = ok(await alice.call("GET", `/invoices?clientId=${clientId}`));
      expect(ids(res.body)).toEqual(expected((m) => m.clientId === clientId));
      expect(res.body.length).toBe(6);
    }
  });

  it("filters by status and clientId together", async () => {
    for (const status of ["draft", "finalized", "void"]) {
      const res = ok(await alice.call("GET", `/invoices?clientId=${globex}&status=${status}`));
      expect(ids(res.body)).toEqual(expected((m) => m.clientId === globex && m.status === status));
      expect(res.body.length).toBe(2);
    }
  });

  it("a client the user does not have gives an empty list (bob has clients 3 and 4)", async () => {
    for (const clientId of [3, 4, 999]) {
      expect(ok(await alice.call("GET", `/invoices?clientId=${clientId}`)).body).toEqual([]);
      expect(ok(await alice.call("GET", `/invoices?clientId=${clientId}&status=draft`)).body).toEqual([]);
    }
  });

  it.each([
    ["status=bogus", "status"],
    ["status=DRAFT", "status"],
    ["status=", "status"],
    ["clientId=abc", "clientId"],
    ["clientId=0", "clientId"],
    ["clientId=-1", "clientId"],
    ["limit=0", "limit"],
    ["limit=201", "limit"],
    ["offset=-1", "offset"],
  ])("400 for %s", async (query, path) => {
    const problem = expectProblem(await alice.call("GET", `/invoices?${query}`), 400, "validation_error");
    expect(problem.errors!.map((e) => e.path)).toEqual([path]);
  });

  it("ignores unknown query parameters", async () => {
    expect(ids(ok(await alice.call("GET", "/invoices?colour=red&status=draft")).body)).toEqual(
      expected((m) => m.status === "draft"),
    );
  });

  it("pages a filtered list through Link and cursor, keeping the filters", async () => {
    const all = expected((m) => m.clientId === acme);
    const seen: number[] = [];
    let url: string | null = `/invoices?clientId=${acme}&limit=4`;
    const pages: number[][] = [];
    while (url) {
      const res = ok(await alice.call("GET", url));
      pages.push(ids(res.body));
      seen.push(...ids(res.body));
      const link = res.headers.get("link");
      if (!link) break;
      const match = /^<([^>]+)>; rel="next"$/.exec(link);
      expect(match).not.toBeNull();
      const next = new URL(match![1]!);
      expect(next.searchParams.get("clientId")).toBe(String(acme));
      expect(next.searchParams.get("limit")).toBe("4");
      expect(next.searchParams.get("offset")).toBe(String(seen.length));
      expect(next.searchParams.get("cursor")).toEqual(expect.any(String));
      url = `${next.pathname}${next.search}`;
    }
    expect(pages.map((p) => p.length)).toEqual([4, 2]);
    expect(seen).toEqual(all);
  });

  it("the cursor gives the same page as the offset alone, and a foreign cursor is ignored", async () => {
    const first = ok(await alice.call("GET", "/invoices?status=draft&limit=2"));
    const cursor = new URL(/^<([^>]+)>/.exec(first.headers.get("link")!)![1]!).searchParams.get("cursor")!;
    const withCursor = ok(
      await alice.call("GET", `/invoices?status=draft&limit=2&offset=2&cursor=${encodeURIComponent(cursor)}`),
    );
    const withOffset = ok(await alice.call("GET", "/invoices?status=draft&limit=2&offset=2"));
    expect(ids(withCursor.body)).toEqual(ids(withOffset.body));
    expect(ids(withCursor.body)).toEqual(expected((m) => m.status === "draft").slice(2, 4));
    // Made for status=draft: with status=void (or another offset) only the offset counts.
    const foreign = ok(
      await alice.call("GET", `/invoices?status=void&limit=2&offset=2&cursor=${encodeURIComponent(cursor)}`),
    );
    expect(ids(foreign.body)).toEqual(expected((m) => m.status === "void").slice(2, 4));
    const otherOffset = ok(
      await alice.call("GET", `/invoices?status=draft&limit=2&offset=1&cursor=${encodeURIComponent(cursor)}`),
    );
    expect(ids(otherOffset.body)).toEqual(expected((m) => m.status === "draft").slice(1, 3));
    // Garbage is ignored too.
    expect(ids(ok(await alice.call("GET", "/invoices?status=draft&limit=2&offset=2&cursor=%%%")).body)).toEqual(
      ids(withOffset.body),
    );
  });

  it("filtered lists follow status and client changes", async () => {
    const carol = await env.user();
    const a = (await newClient(carol)).id;
    const b = (await newClient(carol)).id;
    const { id } = await newInvoice(carol, { clientId: a });
    expect(ids(ok(await carol.call("GET", "/invoices?status=draft")).body)).toEqual([id]);
    ok(await carol.call("PATCH", `/invoices/${id}`, { clientId: b }));
    expect(ok(await carol.call("GET", `/invoices?clientId=${a}`)).body).toEqual([]);
    expect(ids(ok(await carol.call("GET", `/invoices?clientId=${b}`)).body)).toEqual([id]);
    ok(await carol.call("POST", `/invoices/${id}/finalize`));
    expect(ok(await carol.call("GET", "/invoices?status=draft")).body).toEqual([]);
    expect(ids(ok(await carol.call("GET", `/invoices?status=finalized&clientId=${b}`)).body)).toEqual([id]);
    ok(await carol.call("POST", `/invoices/${id}/send`, { to: "x@example.test" }));
    expect(ok(await carol.call("GET", "/invoices?status=finalized")).body).toEqual([]);
    const sent = ok(await carol.call("GET", "/invoices?status=sent")).body;
    expect(ids(sent)).toEqual([id]);
    expect(sent[0].status).toBe("sent");
  });
});
