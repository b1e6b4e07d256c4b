import { describe, expect, it } from "vitest";
import type { Hono } from "hono";
import { createDb } from "@invoicing/core/db/dynamodb";
import { apiRouteModules } from "@invoicing/functions/app/api-routes";
import { buildApp } from "@invoicing/functions/app/build-app";
import { lazyRoutes, routeTableOf } from "@invoicing/functions/app/lazy-routes";
import { apiRouteTable } from "@invoicing/functions/app/route-paths";
import type { AppEnv } from "@invoicing/functions/http/env";
import { errorToResponse } from "@invoicing/functions/http/problems";
import { invoices } from "@invoicing/functions/routes/invoices";
import { evaluateInfra, functionsOf } from "../../scripts/infra.mjs";
import { createTestEnv, type TestResponse } from "../support/env";
import { WIDGET } from "../support/line-items";

/**
 * The API function loads its route modules at the first routed request (app/lazy-routes.ts), from a
 * route table infra builds into it. These check that the lazy app is the eager one: the table infra
 * deploys is the modules' own, nothing is loaded before a request is routed, and the same answers.
 */
const deps = {
  // Nothing listens there: a route that reads the table answers 503, in both apps alike.
  db: createDb({ tableName: "unused", region: "local", dynamoEndpoint: "http://127.0.0.1:1" }),
  clock: () => new Date("2026-01-01T00:00:00Z"),
};
const onError = (error: Error, c: Parameters<typeof errorToResponse>[0]) => errorToResponse(c, error);

const table = routeTableOf(apiRouteModules);
/** The modules as lambda/api.ts loads them, counting the loads. */
function counted(): { load: () => Promise<readonly Hono<AppEnv>[]>; loads: () => number } {
  let loads = 0;
  return {
    load: async () => {
      loads++;
      return apiRouteModules;
    },
    loads: () => loads,
  };
}
const lazyApp = (appDeps: Parameters<typeof buildApp>[0]) =>
  buildApp(appDeps, [lazyRoutes(table, async () => apiRouteModules, onError)]);

describe("the API's lazy route table", () => {
  it("is built into the API function by infra, as derived from the modules (esbuild define, code splitting)", async () => {
    const infra = await evaluateInfra({ stage: "dev", env: { EMAIL_SENDER: "billing@example.com" } });
    const api = functionsOf(infra).find((fn) => fn.handler === "packages/functions/src/lambda/api.handler")!;
    expect(api.nodejs?.splitting).toBe(true);
    const deployed = JSON.parse(api.nodejs!.esbuild!.define!.API_ROUTE_TABLE!);
    expect(deployed).toEqual(apiRouteTable());
    expect(apiRouteTable()).toEqual(table);
    // Every route of every module, public ones marked: /health, and nothing else outside /public/.
    expect(table.length).toBe(
      new Set(apiRouteModules.flatMap((m) => m.routes.map((r) => `${r.method} ${r.path}`))).size,
    );
    expect(table.filter((e) => e.public).map((e) => `${e.method} ${e.path}`)).toEqual(["GET /health"]);
    expect(table[0]).toEqual({ module: 0, method: "GET", path: "/health", public: true });
    expect(table).toContainEqual({ module: 1, method: "ALL", path: "/public/*" });
    expect(table).toContainEqual({
      module: apiRouteModules.indexOf(invoices),
      method: "POST",
      path: "/invoices/:id/finalize",
    });
  });

  it("loads nothing when built, and the modules once, at the first request that reaches a route", async () => {
    const { load, loads } = counted();
    const app = buildApp(deps, [lazyRoutes(table, load, onError)]);
    expect(loads()).toBe(0);
    // Auth answers before routing: no module is needed for a 401, a 404 or a 405.
    expect((await app.request("/invoices/1")).status).toBe(401);
    expect((await app.request("/nowhere", { headers: { authorization: "Bearer x" } })).status).toBe(401);
    expect(loads()).toBe(0);
    expect((await app.request("/health")).status).toBe(503);
    expect((await app.request("/health")).status).toBe(503);
    expect((await app.request("/public/nothing-here")).status).toBe(404);
    expect(loads()).toBe(1);
  });

  it("answers as the eager app does: statuses, headers and bodies", async () => {
    const lazy = lazyApp(deps);
    const eager = buildApp(deps, apiRouteModules);
    const requests: [string, RequestInit?][] = [
      ["/health"],
      ["/health", { method: "DELETE" }],
      ["/public/invoices/abc"],
      ["/public/invoices/abc", { method: "POST" }],
      ["/nowhere"],
      ["/invoices/1"],
      ["/invoices", { method: "PUT" }],
      ["/invoices/1/finalize", { method: "GET" }],
      ["/clients", { method: "POST", body: "{", headers: { "content-type": "application/json" } }],
    ];
    // Every route of the table, too, with and without a (malformed) key.
    for (const entry of table) {
      if (entry.method === "ALL") continue;
      const path = entry.path.replace(/:\w+/g, "1");
      requests.push([path, { method: entry.method }]);
      requests.push([path, { method: entry.method, headers: { authorization: "Bearer not-a-key" } }]);
    }
    const shape = async (res: Response) => {
      const headers = Object.fromEntries([...res.headers].filter(([name]) => name !== "x-request-id"));
      const body = (await res.text()).replace(/"requestId":"[^"]*"/g, "").replace(/req_[A-Za-z0-9]+/g, "req");
      return { status: res.status, headers, body };
    };
    for (const [path, init] of requests) {
      const request = () => new Request(`http://localhost${path}`, init);
      expect(await shape(await lazy.request(request())), `${init?.method ?? "GET"} ${path}`).toEqual(
        await shape(await eager.request(request())),
      );
    }
  });

  it("answers an authenticated session as the eager app does, over DynamoDB Local", async () => {
    // Two fresh worlds with the same clock and user: one served eagerly, one lazily.
    const [eager, lazy] = [await createTestEnv(), await createTestEnv()];
    lazy.via = lazyApp(lazy.deps);
    eager.via = buildApp(eager.deps, apiRouteModules);
    const [eagerUser, lazyUser] = [await eager.user("u-same"), await lazy.user("u-same")];
    const big = { name: "x".repeat(2_000_000) };
    const session: [string, string, unknown?, Record<string, string>?][] = [
      ["POST", "/clients", { name: "Acme", email: "billing@acme.test" }],
      ["POST", "/clients", {}],
      ["POST", "/clients", big],
      ["POST", "/clients", "{"],
      ["POST", "/clients", { name: "Once" }, { "idempotency-key": "k1" }],
      ["POST", "/clients", { name: "Once" }, { "idempotency-key": "k1" }],
      ["GET", "/clients/1"],
      ["GET", "/clients/99"],
      ["GET", "/clients/abc"],
      ["PATCH", "/clients/1", { name: "Acme Inc" }, { "if-match": '"9"' }],
      ["PATCH", "/clients/1", { name: "Acme Inc" }],
      ["POST", "/invoices", { clientId: 1, lineItems: [WIDGET] }],
      ["POST", "/invoices/1/finalize"],
      ["POST", "/invoices/1/finalize"],
      ["DELETE", "/invoices/1"],
      ["GET", "/invoices/1"],
      ["GET", "/invoices?limit=1"],
      ["GET", "/invoices?limit=0"],
      ["POST", "/invoices/1/void"],
      ["POST", "/estimates", { clientId: 1, lineItems: [WIDGET] }],
      ["GET", "/profile"],
      ["GET", "/events?limit=2"],
      ["GET", "/reports/aging"],
      ["PUT", "/clients/1"],
      ["GET", "/nowhere"],
    ];
    const shape = (res: TestResponse) => ({
      status: res.status,
      headers: Object.fromEntries([...res.headers].filter(([name]) => name !== "x-request-id")),
      // What is random by design: request ids, event ids, public tokens.
      body: res.text
        .replace(/req_[A-Za-z0-9_-]+/g, "req")
        .replace(/evt_[A-Za-z0-9_-]+/g, "evt")
        .replace(/"publicToken":"[^"]+"/g, '"publicToken":"…"'),
    });
    const statuses: number[] = [];
    for (const [method, path, body, headers] of session) {
      const want = shape(await eagerUser.call(method, path, body, headers));
      const got = shape(await lazyUser.call(method, path, body, headers));
      expect(got, `${method} ${path}`).toEqual(want);
      statuses.push(got.status);
    }
    // The session did go through the routes' chains, successes and each kind of refusal.
    expect(statuses).toEqual([
      201, 400, 413, 400, 201, 201, 200, 404, 400, 412, 200, 201, 200, 422, 422, 200, 200, 400, 200, 201, 200, 200, 200,
      405, 404,
    ]);
  });
});
