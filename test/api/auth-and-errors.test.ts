import { beforeAll, describe, expect, it } from "vitest";
import { createTestEnv, expectProblem, request, type TestEnv, type TestUser } from "../support/env";

let env: TestEnv;
let alice: TestUser;

beforeAll(async () => {
  env = await createTestEnv();
  alice = await env.user();
});

/**
 * The items every DynamoDB read made during `act` asks for, as "pk/sk" (an API key's hash shown as
 * "…"), in order: GetItem, BatchGetItem, Query (its partition and sort-key condition).
 */
async function itemsReadDuring(act: () => Promise<unknown>): Promise<string[]> {
  const read: string[] = [];
  const name = `spine-reads-${Math.random()}`;
  type Key = { pk?: { S?: string }; sk?: { S?: string } };
  const show = (key: Key) => `${key.pk?.S?.replace(/^APIKEY#.*/, "APIKEY#…")}/${key.sk?.S}`;
  env.deps.db.doc.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as {
        Key?: Key;
        RequestItems?: Record<string, { Keys?: Key[] }>;
        KeyConditionExpression?: string;
      };
      if (context.commandName === "GetItemCommand") read.push(show(input.Key!));
      if (context.commandName === "BatchGetItemCommand")
        for (const table of Object.values(input.RequestItems ?? {})) read.push(...(table.Keys ?? []).map(show));
      if (context.commandName === "QueryCommand" || context.commandName === "ScanCommand")
        read.push(`${context.commandName} ${input.KeyConditionExpression ?? ""}`);
      return next(args);
    },
    { step: "build", name },
  );
  try {
    await act();
  } finally {
    env.deps.db.doc.middlewareStack.remove(name);
  }
  return read;
}

describe("authentication", () => {
  it("rejects a missing, malformed or unknown key with 401 and WWW-Authenticate", async () => {
    for (const headers of [
      {} as Record<string, string>,
      { Authorization: "Basic abc" },
      { Authorization: "Bearer inv_nope" },
      { Authorization: `Bearer inv_${"A".repeat(43)}` },
    ]) {
      const res = await request(env.app, "GET", "/clients", undefined, headers);
      expectProblem(res, 401, "unauthorized");
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
    }
  });

  it("ignores a key in the query string", async () => {
    const res = await request(env.app, "GET", `/clients?api_key=${alice.key}&access_token=${alice.key}`);
    expectProblem(res, 401, "unauthorized");
  });

  it("401 wins over an unknown route; an authenticated unknown route is 404", async () => {
    expectProblem(await request(env.app, "GET", "/nope"), 401, "unauthorized");
    expectProblem(await alice.call("GET", "/nope"), 404, "not_found");
  });

  it("serves /health without a key", async () => {
    const res = await request(env.app, "GET", "/health");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "ok" });
  });
});

describe("api keys", () => {
  it("creates a key shown once, lists it without the secret, and revokes it at once", async () => {
    const created = await alice.call("POST", "/api-keys", { name: "ci" });
    expect(created.status).toBe(201);
    expect(created.headers.get("location")).toBe(`/api-keys/${created.body.id}`);
    // The key names its user (docs/auth.md); the prefix is that part and the secret's first 8 characters.
    expect(created.body.key).toMatch(new RegExp(`^inv_${alice.userId}_[A-Za-z0-9_-]{43}$`));
    expect(created.body).toMatchObject({
      name: "ci",
      prefix: created.body.key.slice(0, `inv_${alice.userId}_`.length + 8),
    });

    const bearer = { Authorization: `Bearer ${created.body.key}` };
    expect((await request(env.app, "GET", "/clients", undefined, bearer)).status).toBe(200);

    const list = await alice.call("GET", "/api-keys");
    expect(list.status).toBe(200);
    const listed = list.body.find((k: { id: number }) => k.id === created.body.id);
    expect(listed).toEqual({
      id: created.body.id,
      name: "ci",
      scope: "full",
      expiresAt: null,
      prefix: created.body.prefix,
      createdAt: created.body.createdAt,
      lastUsedAt: expect.any(String),
    });
    expect(JSON.stringify(list.body)).not.toContain(created.body.key);

    expect((await alice.call("DELETE", `/api-keys/${created.body.id}`)).status).toBe(204);
    expectProblem(await request(env.app, "GET", "/clients", undefined, bearer), 401, "unauthorized");
    expectProblem(await alice.call("DELETE", `/api-keys/${created.body.id}`), 404, "not_found");
  });

  it("POST /api-keys accepts an empty body", async () => {
    const res = await alice.call("POST", "/api-keys");
    expect(res.status).toBe(201);
    expect(res.body.name).toBeNull();
  });
});

describe("request ids and error shape", () => {
  it("echoes a well-formed X-Request-Id and replaces a bad one", async () => {
    const good = await alice.call("GET", "/clients", undefined, { "X-Request-Id": "abc.DEF-123_x" });
    expect(good.headers.get("x-request-id")).toBe("abc.DEF-123_x");
    const bad = await alice.call("GET", "/clients", undefined, { "X-Request-Id": "no spaces allowed" });
    expect(bad.headers.get("x-request-id")).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
    expect(bad.headers.get("x-request-id")).not.toBe("no spaces allowed");
    const problem = await request(env.app, "GET", "/clients", undefined, { "X-Request-Id": "r-1" });
    expect(problem.headers.get("x-request-id")).toBe("r-1");
  });

  it("405 with Allow for a known path and another method", async () => {
    const res = await alice.call("PUT", "/clients");
    const body = expectProblem(res, 405, "method_not_allowed");
    expect(res.headers.get("allow")).toContain("POST");
    expect(body.type).toMatch(/^https?:\/\//);
    expect(body).toMatchObject({ status: 405, title: expect.any(String), detail: expect.any(String) });
  });

  it("orders 413 before 415 before 400", async () => {
    const huge = JSON.stringify({ name: "x".repeat(300 * 1024) });
    expectProblem(
      await alice.call("POST", "/clients", huge, { "Content-Type": "text/plain" }),
      413,
      "payload_too_large",
    );
    expectProblem(
      await alice.call("POST", "/clients", "{nope", { "Content-Type": "text/plain" }),
      415,
      "unsupported_media_type",
    );
    expectProblem(await alice.call("POST", "/clients", "{nope"), 400, "malformed_json");
    // The body's 415 comes before a bad path id's 400, on every resource with ids.
    for (const path of ["/clients/abc", "/invoices/abc", "/estimates/abc", "/recurring-schedules/abc"]) {
      expectProblem(
        await alice.call("PATCH", path, "{}", { "Content-Type": "text/plain" }),
        415,
        "unsupported_media_type",
      );
      expectProblem(await alice.call("PATCH", path, "{nope"), 400, "malformed_json");
    }
  });

  it("rejects bad path ids with 400 before looking anything up", async () => {
    const { id: existing } = (await alice.call("POST", "/clients", { name: "Looked up" })).body;
    // A good id reads the API key's item and the client (one BatchGetItem): the counter sees both.
    const good = await itemsReadDuring(() => alice.call("GET", `/clients/${existing}`));
    expect(good).toEqual([`APIKEY#…/APIKEY`, `USER#${alice.userId}/CLIENT#${String(existing).padStart(10, "0")}`]);
    for (const id of ["0", "-1", "abc", "1.5", "99999999999999999999"]) {
      let res: Awaited<ReturnType<TestUser["call"]>> | undefined;
      // Only the key is checked (401 comes first): no record of the user is read.
      expect(await itemsReadDuring(async () => (res = await alice.call("GET", `/clients/${id}`)))).toEqual([
        "APIKEY#…/APIKEY",
      ]);
      const body = expectProblem(res!, 400, "validation_error");
      expect(body.errors).toEqual([{ path: "id", message: expect.any(String) }]);
    }
  });
});
