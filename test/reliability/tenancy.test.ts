import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { encodeCursor } from "@invoicing/core/db/pagination";
import { createTestEnv, expectProblem, type TestEnv, type TestResponse, type TestUser } from "../support/env";
import { RUNS, partition } from "./harness";
import { VALID_BODIES, endpointName, endpoints, fixtureParam, makeFixtures, pathOf, type Fixtures } from "./endpoints";

/**
 * Tenancy: another user's id is 404 on every endpoint, exactly like an id that
 * does not exist, and changes nothing; lists and cursors never show another user's records.
 * Endpoints come from app.routes, so new ones are checked as they land.
 *
 * Ids are per user (everyone's first client is 1), so "another user's id" is an id the owner has
 * and the intruder does not: the owner makes three of everything, the intruder one.
 */
const ENDPOINTS = endpoints();
const WITH_ID = ENDPOINTS.filter((e) => e.authenticated && e.param === "id");
/** The user's singletons (the business profile, its logo, its Peppol registration) are GETs without an id, not lists. */
const SINGLETONS = new Set(["/profile", "/profile/logo", "/profile/peppol-registration"]);
const LISTS = ENDPOINTS.filter((e) => e.authenticated && e.method === "GET" && !e.param && !SINGLETONS.has(e.path));

let env: TestEnv;
let owner: TestUser;
let intruder: TestUser;
let owned: Fixtures;
/** Strings only the owner's records contain: none may ever reach the intruder. */
let secrets: string[];

beforeAll(async () => {
  env = await createTestEnv();
  owner = await env.user();
  intruder = await env.user();
  owned = await makeFixtures(owner, 3, "Owner");
  await makeFixtures(intruder, 1, "Intruder");
  const invoice = (await owner.call("GET", `/invoices/${owned.invoiceId}`)).body;
  // The owner's client email too: email deliveries (string ids) are checked by what they hold.
  secrets = [
    "Owner",
    "owner@client.test",
    owned.invoiceToken,
    owned.estimateToken,
    owned.creditNoteToken,
    invoice.publicToken,
  ];
});

/** The intruder's highest id per collection (one fixture set: two clients, two invoices, two keys, one of the rest, a credit note among them). */
const INTRUDER_MAX: Record<string, number> = {
  clients: 2,
  invoices: 2,
  estimates: 1,
  "recurring-schedules": 1,
  "api-keys": 2,
  "webhook-endpoints": 1,
  "credit-notes": 1,
};
const onlyIntruders = (path: string, res: TestResponse) => {
  const max = INTRUDER_MAX[path.split("/")[1]!] ?? 0;
  for (const item of res.body as { id: number | string }[]) {
    if (typeof item.id === "number") expect(item.id, `${path} shows id ${item.id}`).toBeLessThanOrEqual(max);
  }
};

const noSecrets = (res: TestResponse) => {
  for (const secret of secrets) expect(res.text, `leaks ${secret}`).not.toContain(secret);
};

describe("another user's id", () => {
  it("there are endpoints with ids to check, and the owner really has those records", async () => {
    expect(WITH_ID.length).toBeGreaterThanOrEqual(20);
    for (const e of WITH_ID.filter((x) => x.method === "GET")) {
      const res = await owner.call("GET", pathOf(e, fixtureParam(e, owned)));
      // The fixture's owner has no business profile: its invoice is found, but is no e-invoice yet.
      if (res.body?.code === "e_invoice_incomplete") continue;
      expect(res.status, endpointName(e)).toBe(200);
    }
  });

  it.each(WITH_ID.map((e) => [endpointName(e), e] as const))(
    "%s: 404 not_found as for a missing id, nothing changes",
    async (name, e) => {
      const body = VALID_BODIES[name]?.(owned);
      const before = await partition(env.deps.db, owner.userId);
      const intruderBefore = await partition(env.deps.db, intruder.userId);

      const foreign = await intruder.call(e.method, pathOf(e, fixtureParam(e, owned)), body);
      const missing = await intruder.call(e.method, pathOf(e, "999999"), body);
      if (foreign.status === 400) {
        throw new Error(
          `${name} answered 400 before looking the id up: give it a valid body in VALID_BODIES (test/reliability/endpoints.ts): ${foreign.text}`,
        );
      }
      expectProblem(foreign, 404, "not_found");
      expect([missing.status, missing.body?.code]).toEqual([404, "not_found"]);
      // Exactly as an id that does not exist: the same title, the same shape (detail names the id).
      expect(Object.keys(foreign.body).sort()).toEqual(Object.keys(missing.body).sort());
      expect(foreign.body.title).toBe(missing.body.title);
      noSecrets(foreign);

      expect(await partition(env.deps.db, owner.userId)).toEqual(before);
      expect(await partition(env.deps.db, intruder.userId)).toEqual(intruderBefore);
    },
  );
});

/** The lists that filter by status, with their statuses (API.md sections 6, 7 and 8); the rest ignore `status`. */
const STATUSES: Record<string, string[]> = {
  "/invoices": ["draft", "finalized", "sent", "paid", "overdue", "void"],
  "/estimates": ["draft", "sent", "accepted", "declined", "expired", "converted"],
  "/recurring-schedules": ["active", "paused", "completed", "cancelled"],
};

describe("lists", () => {
  const filters = [
    "",
    "?status=draft",
    "?status=sent",
    "?status=active",
    "?limit=1",
    "?offset=1",
    `?clientId=3`,
    "?clientId=1&status=sent",
    // Credit notes by invoice: the owner's last fixture invoice (6) has one, the intruder's none.
    "?invoiceId=6",
    "?invoiceId=6&clientId=1",
  ];

  it.each(LISTS.map((e) => [endpointName(e), e] as const))(
    "%s: only the caller's records, whatever the filters",
    async (_name, e) => {
      for (const query of filters) {
        const res = await intruder.call("GET", `${e.path}${query}`);
        noSecrets(res);
        // A status the list does not have is a 400 naming it (status=active for invoices); every
        // other filter is answered, and a parameter a list does not take is ignored (API.md section 1).
        const status = new URLSearchParams(query).get("status");
        if (status && STATUSES[e.path] && !STATUSES[e.path]!.includes(status)) {
          expect(expectProblem(res, 400, "validation_error").errors!.map((x) => x.path)).toEqual(["status"]);
          continue;
        }
        expect(res.status, `${e.path}${query}: ${res.text}`).toBe(200);
        // Reports (API.md section 18) answer with sums, not records (aging is an object): what they
        // must not show of another user is checked by noSecrets above and in test/reports.
        if (e.path.startsWith("/reports/")) continue;
        expect(Array.isArray(res.body), `${e.path}${query}`).toBe(true);
        onlyIntruders(e.path, res);
      }
    },
  );
});

describe("cursors", () => {
  /** The owner's next-page cursor from a list's Link header. */
  async function ownerCursor(path: string): Promise<{ cursor: string; offset: string }> {
    const res = await owner.call("GET", `${path}?limit=1`);
    const link = res.headers.get("link") ?? "";
    const next = new URL(/<([^>]+)>/.exec(link)?.[1] ?? "http://x/");
    const cursor = next.searchParams.get("cursor");
    expect(cursor, `${path}: no next cursor in ${link}`).toBeTruthy();
    return { cursor: cursor!, offset: next.searchParams.get("offset")! };
  }

  it.each(["/clients", "/invoices", "/estimates", "/recurring-schedules"])(
    "%s: the owner's cursor in the intruder's hands reveals nothing",
    async (path) => {
      const { cursor, offset } = await ownerCursor(path);
      const res = await intruder.call("GET", `${path}?limit=1&offset=${offset}&cursor=${encodeURIComponent(cursor)}`);
      expect(res.status).toBe(200);
      noSecrets(res);
      onlyIntruders(path, res);
    },
  );

  it("forged cursors (any id, offset, filter, or garbage) only ever reach the caller's own records", async () => {
    const kinds = {
      "/clients": "CLIENT",
      "/invoices": "INVOICE",
      "/estimates": "ESTIMATE",
      "/recurring-schedules": "SCHEDULE",
    } as const;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...(Object.keys(kinds) as (keyof typeof kinds)[])),
        fc.oneof(
          fc
            .record({
              o: fc.nat({ max: 5 }),
              id: fc.integer({ min: -5, max: 10 }),
              f: fc.constantFrom("INVOICE||", "CLIENT||", "ESTIMATE||", "SCHEDULE||", "x"),
            })
            .map((d) => encodeCursor(d)),
          fc.string({ maxLength: 60 }),
          fc.base64String({ maxLength: 80 }),
        ),
        fc.nat({ max: 3 }),
        async (path, cursor, offset) => {
          const res = await intruder.call(
            "GET",
            `${path}?limit=2&offset=${offset}&cursor=${encodeURIComponent(cursor)}`,
          );
          expect(res.status).toBe(200);
          noSecrets(res);
          onlyIntruders(path, res);
        },
      ),
      { numRuns: RUNS * 2 },
    );
  });

  it("a cursor made for another offset is ignored: offset alone decides", async () => {
    const { cursor } = await ownerCursor("/invoices");
    const plain = await intruder.call("GET", "/invoices?limit=1&offset=0");
    const withCursor = await intruder.call("GET", `/invoices?limit=1&offset=0&cursor=${encodeURIComponent(cursor)}`);
    expect(withCursor.body).toEqual(plain.body);
  });
});
