import { beforeAll, describe, expect, it } from "vitest";
import { attachMeter } from "../support/metering";
import { createTestEnv, expectProblem, request, type TestEnv, type TestUser } from "../support/env";
import { makePng } from "../support/images";
import { scanTable } from "../reliability/harness";
import {
  VALID_BODIES,
  endpointName,
  endpoints,
  fixtureParam,
  makeFixtures,
  pathOf,
  type Fixtures,
} from "../reliability/endpoints";

/**
 * Issue 29: read-only and expiring API keys (API.md sections 2 and 3), through HTTP.
 * - A `read_only` key may GET and HEAD every endpoint as a full key does; every other method of
 *   every endpoint (read from app.routes, so one added later is covered) is 403 insufficient_scope
 *   and changes nothing in the table.
 * - The 403 sits at its place in the error order: after 401, 404 of an unknown route and 405, before
 *   413, 415, 400, 404 of an unknown id, 412 and 422.
 * - `expiresAt`: in the future or 400; from that instant on the key is a 401 like a revoked one.
 * - The scope costs no extra DynamoDB request: a read-only GET is the same one BatchGetItem.
 */
const ENDPOINTS = endpoints().filter((e) => e.authenticated);
const WRITES = ENDPOINTS.filter((e) => e.method !== "GET");
const READS = ENDPOINTS.filter((e) => e.method === "GET");

let env: TestEnv;
let owner: TestUser;
let fixtures: Fixtures;
let readOnly: string;

const as = (key: string, headers: Record<string, string> = {}) => ({ Authorization: `Bearer ${key}`, ...headers });

/** The table as data, without the keys' usage timestamps (auth's one write, not a change of data). */
async function tableData() {
  const items = await scanTable(env.deps.db);
  return items.map(({ lastUsedAt: _, ...rest }) => rest);
}

beforeAll(async () => {
  env = await createTestEnv();
  owner = await env.user();
  fixtures = await makeFixtures(owner);
  const logo = await owner.call("PUT", "/profile/logo", new Uint8Array(makePng(10, 10)), {
    "Content-Type": "image/png",
  });
  expect(logo.status).toBe(204);
  const made = await owner.call("POST", "/api-keys", { name: "accounting", scope: "read_only" });
  expect(made.status).toBe(201);
  readOnly = made.body.key;
});

describe("creating and listing keys with a scope and an expiry", () => {
  it("POST /api-keys answers scope and expiresAt (defaults: full, null); GET /api-keys shows them", async () => {
    const plain = await owner.call("POST", "/api-keys", {});
    expect(plain.status).toBe(201);
    expect(Object.keys(plain.body)).toEqual(["id", "name", "scope", "expiresAt", "key", "prefix", "createdAt"]);
    expect(plain.body).toMatchObject({ scope: "full", expiresAt: null });

    const expiring = await owner.call("POST", "/api-keys", {
      name: "contractor",
      scope: "read_only",
      expiresAt: "2026-12-31T18:00:00+01:00",
    });
    expect(expiring.status).toBe(201);
    expect(expiring.body).toMatchObject({ scope: "read_only", expiresAt: "2026-12-31T17:00:00.000Z" });

    const listed = await owner.call("GET", "/api-keys");
    const shown = listed.body.find((k: { id: number }) => k.id === expiring.body.id);
    expect(shown).toEqual({
      id: expiring.body.id,
      name: "contractor",
      scope: "read_only",
      expiresAt: "2026-12-31T17:00:00.000Z",
      prefix: expiring.body.prefix,
      createdAt: env.clock.now.toISOString(),
      lastUsedAt: null,
    });
    expect(listed.body.find((k: { id: number }) => k.id === plain.body.id)).toMatchObject({
      scope: "full",
      expiresAt: null,
    });
  });

  it("an expiresAt now or in the past, or an unknown scope, is 400 naming the field, and makes no key", async () => {
    const before = (await owner.call("GET", "/api-keys")).body.length;
    const now = env.clock.now.toISOString();
    for (const [body, path] of [
      [{ expiresAt: now }, "expiresAt"],
      [{ expiresAt: "2026-11-22T09:29:59Z" }, "expiresAt"],
      [{ expiresAt: "2026-02-30" }, "expiresAt"],
      [{ scope: "admin" }, "scope"],
      [{ scope: "read-only" }, "scope"],
    ] as const) {
      const problem = expectProblem(await owner.call("POST", "/api-keys", body), 400, "validation_error");
      expect(problem.errors?.map((e) => e.path)).toEqual([path]);
    }
    expect((await owner.call("GET", "/api-keys")).body.length).toBe(before);
  });
});

describe("a read-only key", () => {
  it("reads every endpoint as a full key does (GET and HEAD)", async () => {
    let served = 0;
    for (const e of READS) {
      const path = pathOf(e, e.param ? fixtureParam(e, fixtures) : "1");
      const full = await owner.call("GET", path);
      const read = await request(env.app, "GET", path, undefined, as(readOnly));
      expect(read.status, endpointName(e)).toBe(full.status);
      expect([read.status, read.body?.code], endpointName(e)).toEqual([full.status, full.body?.code]);
      if (full.status < 300) served++;
      const head = await env.app.request(`http://localhost${path}`, { method: "HEAD", headers: as(readOnly) });
      expect(head.status, `HEAD ${e.path}`).toBe(full.status);
    }
    // All but the e-invoices (422: the fixtures' profile has no seller address) and the Peppol
    // registration (404: never registered; API.md section 19) answer 2xx.
    expect(served).toBeGreaterThanOrEqual(READS.length - 3);
  });

  it("gets 403 insufficient_scope on every other method of every endpoint, and nothing changes", async () => {
    // A valid key (1–255 visible ASCII, no space): a request that got past the scope check would
    // reach its write, and the table below would show it.
    const idempotencyKey = (e: (typeof WRITES)[number]) => `ro-${e.method}-${e.path}`;
    expect(WRITES.every((e) => /^[\x21-\x7e]{1,255}$/.test(idempotencyKey(e)))).toBe(true);
    expect(WRITES.length).toBeGreaterThan(20);
    const before = await tableData();
    for (const e of WRITES) {
      const path = pathOf(e, e.param ? fixtureParam(e, fixtures) : "1");
      const body = VALID_BODIES[endpointName(e)]?.(fixtures);
      const res =
        e.path === "/profile/logo"
          ? await request(
              env.app,
              e.method,
              path,
              new Uint8Array(makePng(10, 10)),
              as(readOnly, { "Content-Type": "image/png" }),
            )
          : await request(env.app, e.method, path, body, as(readOnly, { "Idempotency-Key": idempotencyKey(e) }));
      expectProblem(res, 403, "insufficient_scope");
      expect(res.headers.get("location"), endpointName(e)).toBeNull();
    }
    expect(await tableData()).toEqual(before);
  });

  it("cannot create keys", async () => {
    const before = (await owner.call("GET", "/api-keys")).body;
    expectProblem(await request(env.app, "POST", "/api-keys", {}, as(readOnly)), 403, "insufficient_scope");
    expectProblem(
      await request(env.app, "POST", "/api-keys", { scope: "full" }, as(readOnly)),
      403,
      "insufficient_scope",
    );
    expect((await owner.call("GET", "/api-keys")).body.map((k: { id: number }) => k.id)).toEqual(
      before.map((k: { id: number }) => k.id),
    );
  });

  it("403 comes after 401, 404 (no route) and 405, and before 413, 415, 400, 404 (no such id), 412 and 422", async () => {
    const ro = as(readOnly);
    // Before the 403: no route, a method the path does not serve.
    expectProblem(await request(env.app, "POST", "/no-such-route", {}, ro), 404, "not_found");
    expectProblem(await request(env.app, "PUT", "/clients", {}, ro), 405, "method_not_allowed");
    expectProblem(await request(env.app, "DELETE", "/invoices", undefined, ro), 405, "method_not_allowed");
    // After it: everything the route itself would have said.
    const big = JSON.stringify({ name: "x".repeat(300 * 1024) });
    expectProblem(await request(env.app, "POST", "/clients", big, ro), 403, "insufficient_scope");
    expectProblem(
      await request(env.app, "POST", "/clients", "name=x", as(readOnly, { "Content-Type": "text/plain" })),
      403,
      "insufficient_scope",
    );
    expectProblem(await request(env.app, "POST", "/clients", "{not json", ro), 403, "insufficient_scope");
    expectProblem(await request(env.app, "POST", "/clients", { status: "x" }, ro), 403, "insufficient_scope");
    expectProblem(await request(env.app, "POST", "/invoices/abc/finalize", undefined, ro), 403, "insufficient_scope");
    expectProblem(await request(env.app, "DELETE", "/invoices/999999", undefined, ro), 403, "insufficient_scope");
    expectProblem(await request(env.app, "DELETE", "/api-keys/999999", undefined, ro), 403, "insufficient_scope");
    expectProblem(
      await request(env.app, "PATCH", "/profile", { footer: "x" }, as(readOnly, { "If-Match": '"stale"' })),
      403,
      "insufficient_scope",
    );
    expectProblem(
      await request(env.app, "POST", `/invoices/${fixtures.invoiceId}/finalize`, undefined, ro),
      403,
      "insufficient_scope",
    );
    expectProblem(
      await request(env.app, "PUT", "/profile/logo", "not an image", as(readOnly, { "Content-Type": "image/png" })),
      403,
      "insufficient_scope",
    );
  });

  it("an expired read-only key is 401, not 403", async () => {
    const made = await owner.call("POST", "/api-keys", { scope: "read_only", expiresAt: "2026-11-22T10:00:00Z" });
    env.clock.set("2026-11-22T10:00:00.000Z");
    try {
      expectProblem(await request(env.app, "POST", "/clients", { name: "x" }, as(made.body.key)), 401, "unauthorized");
    } finally {
      env.clock.set("2026-11-22T09:30:00.000Z");
    }
  });

  it("costs no extra DynamoDB request: a GET by id is still one BatchGetItem, a refused change sends no write", async () => {
    await request(env.app, "GET", "/clients", undefined, as(readOnly)); // lastUsedAt refreshed before counting
    const meter = attachMeter(env.deps.db.doc);
    try {
      const res = await request(env.app, "GET", `/invoices/${fixtures.invoiceId}`, undefined, as(readOnly));
      expect(res.status).toBe(200);
      expect({ commands: meter.byCommand, roundTrips: meter.roundTrips }).toEqual({
        commands: { BatchGetItemCommand: 1 },
        roundTrips: 1,
      });
      meter.reset();
      expectProblem(
        await request(env.app, "PATCH", `/invoices/${fixtures.invoiceId}`, { notes: "x" }, as(readOnly)),
        403,
        "insufficient_scope",
      );
      expect(meter.byCommand).toEqual({ BatchGetItemCommand: 1 });
    } finally {
      meter.detach();
    }
  });
});

describe("an expiring key", () => {
  it("works until the millisecond before expiresAt and is 401 from expiresAt on, for reads and writes", async () => {
    const made = await owner.call("POST", "/api-keys", { name: "contractor", expiresAt: "2026-11-23T09:30:00Z" });
    const key = made.body.key as string;
    const get = () => request(env.app, "GET", `/invoices/${fixtures.invoiceId}`, undefined, as(key));
    const post = () => request(env.app, "POST", "/clients", { name: "By the contractor" }, as(key));
    try {
      env.clock.set("2026-11-23T09:29:59.999Z");
      expect((await get()).status).toBe(200);
      expect((await post()).status).toBe(201);
      env.clock.set("2026-11-23T09:30:00.000Z");
      const refused = expectProblem(await get(), 401, "unauthorized");
      expect(refused.detail).toBe("the API key is unknown or revoked");
      expect((await get()).headers.get("www-authenticate")).toMatch(/^Bearer/);
      expectProblem(await post(), 401, "unauthorized");
      // 401 before everything else, as for a revoked key.
      expectProblem(await request(env.app, "GET", "/no-such-route", undefined, as(key)), 401, "unauthorized");
      expectProblem(await request(env.app, "POST", "/clients", "{bad", as(key)), 401, "unauthorized");
      env.clock.set("2027-06-01T00:00:00.000Z");
      expectProblem(await get(), 401, "unauthorized");
    } finally {
      env.clock.set("2026-11-22T09:30:00.000Z");
    }
    // The key is still listed (with its expiry) until it is deleted, as Stripe lists expired keys.
    const listed = (await owner.call("GET", "/api-keys")).body.find((k: { id: number }) => k.id === made.body.id);
    expect(listed).toMatchObject({ expiresAt: "2026-11-23T09:30:00.000Z", scope: "full" });
  });
});
