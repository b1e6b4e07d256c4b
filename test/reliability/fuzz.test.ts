import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "@invoicing/core/keys/api-keys";
import { problemStatus, type ProblemCode } from "@invoicing/functions/http/problems";
import { createTestEnv, request, type TestEnv, type TestResponse, type TestUser } from "../support/env";
import { FUZZ_RUNS, partition, problemShape } from "./harness";
import {
  VALID_BODIES,
  endpointName,
  endpoints,
  fixtureParam,
  makeFixtures,
  pathOf,
  type Endpoint,
  type Fixtures,
} from "./endpoints";

/**
 * Hostile input on every endpoint the app routes (read from app.routes, so new endpoints are fuzzed
 * as they land): random ids, query strings, headers and bodies — valid bodies with one field
 * mutated among them, to get past the first check. Whatever comes in: never a 5xx, every error is
 * problem+json with the status its code means, and a refused request changes nothing.
 */
const ENDPOINTS = endpoints();

let env: TestEnv;
let alice: TestUser;
let fixtures: Fixtures;
/** Alice's key for the fuzzed requests (replaced if the fuzzer revokes it). */
let key: string;

beforeAll(async () => {
  env = await createTestEnv();
  alice = await env.user();
  key = alice.key;
  fixtures = await makeFixtures(alice);
});

/** The user's records as they stand; id counters left out (a refused create may skip an id: API.md allows gaps in ids). */
async function records(): Promise<unknown[]> {
  const items = await partition(env.deps.db, alice.userId);
  return items.filter((item) => !/^COUNTER#(?!.*Number$)/.test(String(item.sk)));
}

// ---------------------------------------------------------------- arbitraries

const headerSafe = (maxLength: number) =>
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength });

const weirdIds = [
  "0",
  "-1",
  "abc",
  "1.5",
  "1e3",
  "%20",
  "%00",
  "99999999999999999999",
  "%EF%BC%91",
  "null",
  "%2e%2e",
  "1%3BDROP",
  "0x10",
  "+1",
  "01",
];

function paramArb(e: Endpoint): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(fixtureParam(e, fixtures)) },
    { weight: 2, arbitrary: fc.constantFrom(...weirdIds) },
    { weight: 1, arbitrary: fc.nat().map(String) },
    { weight: 2, arbitrary: fc.string({ maxLength: 30 }).map(encodeURIComponent) },
  );
}

const queryArb = fc.option(
  fc.dictionary(
    fc.oneof(
      fc.constantFrom("limit", "offset", "cursor", "status", "clientId", "api_key", "to"),
      fc.string({ maxLength: 8 }),
    ),
    fc.oneof(
      fc.constantFrom(
        "0",
        "1",
        "200",
        "201",
        "-1",
        "abc",
        "1.5",
        "",
        "draft",
        "paid",
        "sent",
        "active",
        "bogus",
        "eyJvIjoxLCJpZCI6MSwiZiI6IklOVk9JQ0V8fCJ9",
      ),
      fc.string({ maxLength: 20 }),
      fc.integer().map(String),
    ),
    { maxKeys: 4 },
  ),
  { nil: undefined },
);

type AuthChoice = { kind: "valid" } | { kind: "none" } | { kind: "bogus"; value: string } | { kind: "query" };

const authArb: fc.Arbitrary<AuthChoice> = fc.oneof(
  { weight: 10, arbitrary: fc.constant({ kind: "valid" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "none" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "query" as const }) },
  {
    weight: 2,
    arbitrary: fc
      .oneof(
        headerSafe(60),
        fc.constantFrom(
          "Bearer",
          "Bearer ",
          "Basic dXNlcjpwYXNz",
          "Bearer inv_",
          "Bearer inv_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        ),
      )
      .map((value) => ({ kind: "bogus" as const, value })),
  },
);

const headersArb = fc.record(
  {
    "Content-Type": fc.oneof(
      fc.constantFrom(
        "application/json",
        "application/json; charset=utf-8",
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/problem+json",
        "",
        "multipart/form-data",
      ),
      headerSafe(30),
    ),
    "If-Match": fc.oneof(fc.constantFrom('"1"', '"2"', "*", 'W/"1"', '"999"'), headerSafe(20)),
    "Idempotency-Key": headerSafe(300),
    "X-Request-Id": headerSafe(140),
  },
  { requiredKeys: [] },
);

/** Leaf paths of a JSON value (`lineItems.0.quantity`), the value itself as "". */
function leafPaths(value: unknown, prefix = ""): string[] {
  if (value && typeof value === "object") {
    const entries = Object.entries(value);
    if (entries.length) return entries.flatMap(([k, v]) => leafPaths(v, prefix ? `${prefix}.${k}` : k));
  }
  return [prefix];
}

function mutate(body: unknown, path: string, action: "set" | "delete" | "extra", value: unknown): unknown {
  const copy = structuredClone(body) as Record<string, unknown>;
  if (action === "extra") return { ...copy, [path || "status"]: value };
  if (path === "") return value;
  const parts = path.split(".");
  let at: Record<string, unknown> = copy;
  for (const part of parts.slice(0, -1)) at = at[part] as Record<string, unknown>;
  if (action === "delete") delete at[parts[parts.length - 1]!];
  else at[parts[parts.length - 1]!] = value;
  return copy;
}

/** Valid JSON nested 30 000 deep (180 KB, under the size limit): recursion on it would overflow. */
const deeplyNested = `${'{"a":'.repeat(30_000)}1${"}".repeat(30_000)}`;

function bodyArb(e: Endpoint): fc.Arbitrary<string | undefined> {
  if (e.method === "GET") return fc.constant(undefined);
  const valid = VALID_BODIES[endpointName(e)]?.(fixtures);
  const options: fc.WeightedArbitrary<string | undefined>[] = [
    { weight: 2, arbitrary: fc.constant(undefined) },
    { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
    { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "{",
        "[]",
        "null",
        '"x"',
        "1",
        '{"a":',
        "\u0000",
        "{}",
        '{"__proto__":{"x":1}}',
        "[".repeat(5000),
        deeplyNested,
      ),
    },
  ];
  if (valid !== undefined) {
    options.push({ weight: 2, arbitrary: fc.constant(JSON.stringify(valid)) });
    options.push({
      weight: 6,
      arbitrary: fc
        .tuple(
          fc.constantFrom(...leafPaths(valid)),
          fc.constantFrom<"set" | "delete" | "extra">("set", "set", "delete", "extra"),
          fc.jsonValue({ maxDepth: 2 }),
        )
        .map(([path, action, value]) => JSON.stringify(mutate(valid, path, action, value))),
    });
  }
  return fc.oneof(...options);
}

interface FuzzRequest {
  path: string;
  auth: AuthChoice;
  headers: Record<string, string>;
  body: string | undefined;
}

function requestArb(e: Endpoint): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      param: e.param ? paramArb(e) : fc.constant(""),
      query: queryArb,
      auth: authArb,
      headers: headersArb,
      body: bodyArb(e),
    })
    .map(({ param, query, auth, headers, body }) => {
      const search = new URLSearchParams(query ?? {});
      if (auth.kind === "query") search.set("api_key", key); // API.md: a key in the query string is ignored
      const qs = search.toString();
      return { path: `${pathOf(e, param)}${qs ? `?${qs}` : ""}`, auth, headers, body };
    });
}

// ---------------------------------------------------------------- checks

async function send(e: Endpoint, req: FuzzRequest): Promise<TestResponse> {
  const headers: Record<string, string> = { ...req.headers };
  if (req.auth.kind === "valid") headers.Authorization = `Bearer ${key}`;
  if (req.auth.kind === "bogus") headers.Authorization = req.auth.value;
  // request() adds Content-Type: application/json to a body unless one is given; an explicit "" stays.
  return request(env.app, e.method, req.path, req.body, headers);
}

function checkAnswer(e: Endpoint, req: FuzzRequest, res: TestResponse): void {
  const where = `${e.method} ${req.path} → ${res.status} ${res.text.slice(0, 200)}`;
  expect(res.status, where).toBeLessThan(500);
  expect(res.headers.get("x-request-id"), where).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
  if (e.authenticated && req.auth.kind !== "valid") {
    expect(res.status, where).toBe(401);
    expect(res.headers.get("www-authenticate"), where).toMatch(/^Bearer/);
  }
  if (res.status >= 400) {
    const code = problemShape(res);
    expect(problemStatus(code as ProblemCode), where).toBe(res.status);
  }
}

/** If the fuzzer revoked the key it calls with (DELETE /api-keys/{its id}), it gets a new one. */
async function keepKey(): Promise<void> {
  const probe = await request(env.app, "GET", "/api-keys", undefined, { Authorization: `Bearer ${key}` });
  if (probe.status === 401) key = (await createApiKey(env.deps.db, alice.userId, "fuzz", env.clock.now)).key;
}

describe("fuzzing every endpoint", () => {
  it("the endpoint list comes from the app and covers the API", () => {
    const names = ENDPOINTS.map(endpointName);
    expect(names).toEqual(
      expect.arrayContaining([
        "POST /invoices",
        "POST /invoices/:id/mark-paid",
        "GET /public/invoices/:token",
        "POST /webhooks/card-processor",
      ]),
    );
    expect(names.length).toBeGreaterThanOrEqual(40);
  });

  it.each(ENDPOINTS.map((e) => [endpointName(e), e] as const))(
    "%s: never a 5xx, problems well-formed, refusals change nothing",
    async (_name, e) => {
      await fc.assert(
        fc.asyncProperty(requestArb(e), async (req) => {
          const before = await records();
          const res = await send(e, req);
          checkAnswer(e, req, res);
          if (res.status >= 400)
            expect(await records(), `${e.method} ${req.path} → ${res.status} changed records`).toEqual(before);
          if (e.method === "DELETE" && e.path.startsWith("/api-keys") && res.status === 204) await keepKey();
        }),
        { numRuns: FUZZ_RUNS },
      );
    },
    // Never below the suite's 180 s (vitest.config.ts): a limit catches a hang, it measures nothing.
    180_000 + FUZZ_RUNS * 6_000,
  );

  it("deeply nested JSON on any write endpoint, with and without an Idempotency-Key: a 4xx, nothing changes", async () => {
    for (const e of ENDPOINTS.filter((x) => x.method === "POST" || x.method === "PATCH")) {
      for (const headers of [{}, { "Idempotency-Key": `deep-${endpointName(e)}` }] as Record<string, string>[]) {
        const before = await records();
        const res = await request(
          env.app,
          e.method,
          pathOf(e, e.param ? fixtureParam(e, fixtures) : ""),
          deeplyNested,
          { Authorization: `Bearer ${key}`, ...headers },
        );
        expect(res.status, `${endpointName(e)} ${res.text.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
        expect(res.status, endpointName(e)).toBeLessThan(500);
        problemShape(res);
        expect(await records()).toEqual(before);
      }
    }
  });

  it("a body over 256 KiB on any write endpoint: 413 payload_too_large, nothing changes", async () => {
    const big = JSON.stringify({ notes: "x".repeat(256 * 1024) });
    for (const e of ENDPOINTS.filter((x) => x.method === "POST" || x.method === "PATCH")) {
      const before = await records();
      const res = await request(env.app, e.method, pathOf(e, e.param ? fixtureParam(e, fixtures) : ""), big, {
        Authorization: `Bearer ${key}`,
      });
      expect(res.status, endpointName(e)).toBe(413);
      expect(problemShape(res)).toBe("payload_too_large");
      expect(await records()).toEqual(before);
    }
  });
});
