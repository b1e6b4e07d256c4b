import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import { recordKey, type KeyRecord } from "@invoicing/core/idempotency/records";
import { createTestEnv, expectProblem, request, type TestEnv, type TestUser } from "../support/env";

let env: TestEnv;
let alice: TestUser;

beforeAll(async () => {
  env = await createTestEnv();
  alice = await env.user();
});

const key = (name: string) => ({ "Idempotency-Key": `${name}-${Math.random().toString(36).slice(2)}` });

async function readRecord(user: TestUser, idempotencyKey: string): Promise<KeyRecord | undefined> {
  const out = await env.deps.db.doc.send(
    new GetCommand({ TableName: env.tableName, Key: recordKey(user.userId, idempotencyKey) }),
  );
  return out.Item as KeyRecord | undefined;
}

async function clientNames(user: TestUser): Promise<string[]> {
  const res = await user.call("GET", "/clients");
  expect(res.status).toBe(200);
  return res.body.map((c: { name: string }) => c.name);
}

describe("Idempotency-Key on POST", () => {
  it("replays a repeated create: same status, body, Location and ETag, marked replayed; one record exists", async () => {
    const user = await env.user();
    const k = key("create");
    const first = await user.call("POST", "/clients", { name: "Acme", email: "billing@acme.test" }, k);
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();

    const again = await user.call("POST", "/clients", { name: "Acme", email: "billing@acme.test" }, k);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("location")).toBe(first.headers.get("location"));
    expect(again.headers.get("etag")).toBe(first.headers.get("etag"));
    expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await clientNames(user)).toEqual(["Acme"]);
  });

  it("replays the response kept from the first request, not the record's state now", async () => {
    const user = await env.user();
    const k = key("kept");
    const first = await user.call("POST", "/clients", { name: "Before" }, k);
    env.clock.advance(1000);
    expect((await user.call("PATCH", `/clients/${first.body.id}`, { name: "After" })).status).toBe(200);
    const again = await user.call("POST", "/clients", { name: "Before" }, k);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("etag")).toBe(first.headers.get("etag"));
  });

  it("compares bodies as JSON values: another key order or spacing is the same request", async () => {
    const user = await env.user();
    const k = key("canonical");
    const first = await user.call("POST", "/clients", '{"name":"Canon","paymentTermsDays":14}', k);
    const again = await user.call("POST", "/clients", '{ "paymentTermsDays": 14,\n  "name": "Canon" }', k);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body.id).toBe(first.body.id);
  });

  it("another body under the same key: 422 idempotency_key_reused, and nothing is created", async () => {
    const user = await env.user();
    const k = key("reused");
    expect((await user.call("POST", "/clients", { name: "One" }, k)).status).toBe(201);
    expectProblem(await user.call("POST", "/clients", { name: "Two" }, k), 422, "idempotency_key_reused");
    expect(await clientNames(user)).toEqual(["One"]);
    // The original request still replays.
    expect((await user.call("POST", "/clients", { name: "One" }, k)).headers.get("idempotent-replayed")).toBe("true");
  });

  it("scopes keys to the user: another user's same key and body runs on its own", async () => {
    const [ann, ben] = [await env.user(), await env.user()];
    const k = key("scope");
    const a = await ann.call("POST", "/clients", { name: "Same" }, k);
    const b = await ben.call("POST", "/clients", { name: "Same" }, k);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.headers.get("idempotent-replayed")).toBeNull();
    expect(await clientNames(ben)).toEqual(["Same"]);
    const otherBody = await ben.call("POST", "/clients", { name: "Other" }, k);
    expectProblem(otherBody, 422, "idempotency_key_reused");
  });

  it("an error response is not kept: the key is released and a retry runs afresh", async () => {
    const user = await env.user();
    const k = key("released");
    expectProblem(await user.call("POST", "/clients", { name: "" }, k), 400, "validation_error");
    expect(await readRecord(user, k["Idempotency-Key"])).toBeUndefined();
    const retry = await user.call("POST", "/clients", { name: "Fixed" }, k);
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect(await clientNames(user)).toEqual(["Fixed"]);
  });

  it("keeps a record per user and hashed key, with a 24 h TTL; after it the key is new again", async () => {
    // The contract's 24 hours, stated here: not the code's constant, which a regression would move too.
    const DAY_SECONDS = 24 * 60 * 60;
    const user = await env.user();
    const k = key("expiry");
    const claimedAt = env.clock.now.getTime();
    const first = await user.call("POST", "/clients", { name: "Day one" }, k);
    const record = await readRecord(user, k["Idempotency-Key"]);
    expect(record).toMatchObject({
      pk: `USER#${user.userId}`,
      state: "completed",
      expiresAt: Math.floor(claimedAt / 1000) + DAY_SECONDS,
      response: { status: 201, headers: { location: `/clients/${first.body.id}` } },
    });
    expect(record!.sk).toMatch(/^IDEMPOTENCY#[0-9a-f]{64}$/);
    expect(record!.sk).not.toContain(k["Idempotency-Key"]);

    env.clock.advance(DAY_SECONDS * 1000 - 1000);
    expect((await user.call("POST", "/clients", { name: "Day one" }, k)).headers.get("idempotent-replayed")).toBe(
      "true",
    );
    // DynamoDB Local never runs TTL deletion: this is the read-time check at work.
    env.clock.advance(1000);
    const fresh = await user.call("POST", "/clients", { name: "Day one" }, k);
    expect(fresh.status).toBe(201);
    expect(fresh.headers.get("idempotent-replayed")).toBeNull();
    expect(fresh.body.id).not.toBe(first.body.id);
    // And any body may use it now.
    env.clock.advance(DAY_SECONDS * 1000);
    expect((await user.call("POST", "/clients", { name: "Day three" }, k)).status).toBe(201);
    expect((await clientNames(user)).sort()).toEqual(["Day one", "Day one", "Day three"]);
  });

  it("requests without the header are not deduplicated", async () => {
    const user = await env.user();
    await user.call("POST", "/clients", { name: "Twin" });
    await user.call("POST", "/clients", { name: "Twin" });
    expect(await clientNames(user)).toEqual(["Twin", "Twin"]);
  });

  it("accepts 1 to 255 visible ASCII characters, else 400 validation_error on Idempotency-Key", async () => {
    const ok = await alice.call("POST", "/clients", { name: "Long key" }, { "Idempotency-Key": "k".repeat(255) });
    expect(ok.status).toBe(201);
    for (const bad of ["", "k".repeat(256), "has space", "tab\tinside", "caf\u00e9"]) {
      const res = await alice.call("POST", "/clients", { name: "Bad key" }, { "Idempotency-Key": bad });
      const problem = expectProblem(res, 400, "validation_error");
      expect(problem.errors).toEqual([{ path: "Idempotency-Key", message: expect.any(String) }]);
    }
  });

  it("keeps API.md's error order around the key", async () => {
    const bad = { "Idempotency-Key": "not valid" };
    // 401 → 404 unknown route → 405 → 413 → 415 come before the key's 400.
    expectProblem(await request(env.app, "POST", "/clients", { name: "x" }, bad), 401, "unauthorized");
    expectProblem(await alice.call("POST", "/nowhere", { name: "x" }, bad), 404, "not_found");
    expectProblem(await alice.call("POST", "/clients/1", { name: "x" }, bad), 405, "method_not_allowed");
    expectProblem(
      await alice.call("POST", "/clients", `{"name":"${"x".repeat(300 * 1024)}"}`, bad),
      413,
      "payload_too_large",
    );
    expectProblem(
      await alice.call("POST", "/clients", '{"name":"x"}', { ...bad, "Content-Type": "text/plain" }),
      415,
      "unsupported_media_type",
    );

    // A used key: the body's own 400 comes before 422 idempotency_key_reused.
    const user = await env.user();
    const k = key("order");
    await user.call("POST", "/clients", { name: "Used" }, k);
    expectProblem(await user.call("POST", "/clients", { name: "Used", bogus: 1 }, k), 400, "validation_error");
    expectProblem(await user.call("POST", "/clients", "{not json", k), 400, "malformed_json");
    expectProblem(await user.call("POST", "/clients", { name: "Changed" }, k), 422, "idempotency_key_reused");
  });

  it("POST /api-keys keeps no response: its Idempotency-Key is ignored", async () => {
    const user = await env.user();
    const k = key("apikey");
    const first = await user.call("POST", "/api-keys", { name: "ci" }, k);
    const second = await user.call("POST", "/api-keys", { name: "ci" }, k);
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body.id).not.toBe(first.body.id);
    expect(second.body.key).not.toBe(first.body.key);
    expect(second.headers.get("idempotent-replayed")).toBeNull();
    expect(await readRecord(user, k["Idempotency-Key"])).toBeUndefined();
    expect((await user.call("POST", "/api-keys", {}, { "Idempotency-Key": "" })).status).toBe(201);
  });
});
