import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { jobs } from "@invoicing/core/jobs/all";
import { createTestEnv, expectProblem, type TestEnv, type TestUser } from "../support/env";
import { newClient, ok } from "../invoices/fixtures";
import { startReceiver, type Receiver } from "./receiver";

/**
 * Rotating a webhook endpoint's signing secret (docs/events.md, "Rotating the secret"): for 24 hours
 * by the clock the attempts take, deliveries are signed with the new and the replaced secret, then
 * with the new one only — checked by a receiver verifying with the `standardwebhooks` library.
 */
let env: TestEnv;
let receiver: Receiver;

beforeAll(async () => {
  env = await createTestEnv({ extraDeps: { webhookPolicy: { allowPrivate: true, timeoutMs: 5_000 } } });
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

const accepts = (secret: string, delivery: Receiver["received"][number]): boolean => {
  try {
    new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
};

async function endpoint(user: TestUser) {
  return ok(await user.call("POST", "/webhook-endpoints", { url: receiver.url, events: ["*"] }), 201).body as {
    id: number;
    secret: string;
  };
}

describe("rotate-secret", () => {
  it("signs with both secrets for 24 hours, then with the new one only; the endpoint and its history stay", async () => {
    const user = await env.user();
    const { id, secret: old } = await endpoint(user);
    const start = receiver.received.length;
    const client = await newClient(user);
    await env.drainStream();
    expect(receiver.received.slice(start).map((d) => accepts(old, d))).toEqual([true]);

    const rotated = ok(await user.call("POST", `/webhook-endpoints/${id}/rotate-secret`));
    const fresh = rotated.body.secret as string;
    expect(rotated.body).toEqual({
      id,
      url: receiver.url,
      events: ["*"],
      description: null,
      enabled: true,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      createdAt: expect.any(String),
    });
    expect(fresh).not.toBe(old);
    expect(rotated.headers.get("cache-control")).toBe("no-store");
    // Shown there only.
    expect(ok(await user.call("GET", `/webhook-endpoints/${id}`)).body).not.toHaveProperty("secret");

    // During the overlap: two v1 signatures; a receiver holding either secret accepts the delivery.
    env.clock.advance(23 * 3_600_000);
    ok(await user.call("PATCH", `/clients/${client.id}`, { name: "During the overlap" }));
    await env.drainStream();
    const during = receiver.received.at(-1)!;
    expect(JSON.parse(during.body)).toMatchObject({ type: "client.updated", data: { name: "During the overlap" } });
    expect(String(during.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    expect([accepts(old, during), accepts(fresh, during)]).toEqual([true, true]);

    // A retry made by the job inside the overlap is signed by both too; one made after it, by the
    // new secret only: the overlap ends by the job's clock ("now"), not by the wall clock.
    receiver.script.push(500);
    ok(await user.call("PATCH", `/clients/${client.id}`, { name: "Retried" }));
    await env.drainStream(); // attempt 1: 500
    const t = env.clock.now.getTime();
    receiver.script.push(500);
    expect(await jobs.webhooks!(env.deps, new Date(t + 2 * 60_000))).toMatchObject({ failed: 1 });
    const retryDuring = receiver.received.at(-1)!;
    expect([accepts(old, retryDuring), accepts(fresh, retryDuring)]).toEqual([true, true]);
    expect(await jobs.webhooks!(env.deps, new Date(t + 2 * 3_600_000))).toMatchObject({ succeeded: 1 });
    const retryAfter = receiver.received.at(-1)!;
    expect(JSON.parse(retryAfter.body)).toMatchObject({ data: { name: "Retried" } });
    expect(String(retryAfter.headers["webhook-signature"]).split(" ")).toHaveLength(1);
    expect([accepts(old, retryAfter), accepts(fresh, retryAfter)]).toEqual([false, true]);

    // After the overlap, by the subscriber's clock too.
    env.clock.advance(2 * 3_600_000);
    ok(await user.call("PATCH", `/clients/${client.id}`, { name: "After the overlap" }));
    await env.drainStream();
    const after = receiver.received.at(-1)!;
    expect(JSON.parse(after.body)).toMatchObject({ data: { name: "After the overlap" } });
    expect([accepts(old, after), accepts(fresh, after)]).toEqual([false, true]);

    // Deliveries and history kept: every attempt of the endpoint, before and after the rotation.
    const deliveries = ok(await user.call("GET", `/webhook-endpoints/${id}/deliveries`)).body as { type: string }[];
    expect(deliveries.map((d) => d.type)).toEqual([
      "client.updated",
      "client.updated",
      "client.updated",
      "client.updated",
      "client.updated",
      "client.created",
    ]);
  });

  it("a second rotation within the overlap keeps the first secret signing for its own 24 hours", async () => {
    const user = await env.user();
    const { id, secret: first } = await endpoint(user);
    const second = ok(await user.call("POST", `/webhook-endpoints/${id}/rotate-secret`)).body.secret as string;
    const third = ok(await user.call("POST", `/webhook-endpoints/${id}/rotate-secret`)).body.secret as string;
    await newClient(user);
    await env.drainStream();
    const delivery = receiver.received.at(-1)!;
    expect([first, second, third].map((s) => accepts(s, delivery))).toEqual([true, true, true]);
  });

  it("404 for another user's endpoint or an unknown one; 400 for a bad id", async () => {
    const user = await env.user();
    const { id } = await endpoint(user);
    const other = await env.user();
    expectProblem(await other.call("POST", `/webhook-endpoints/${id}/rotate-secret`), 404, "not_found");
    expectProblem(await user.call("POST", "/webhook-endpoints/99/rotate-secret"), 404, "not_found");
    expectProblem(await user.call("POST", "/webhook-endpoints/x/rotate-secret"), 400, "validation_error");
  });
});

describe("the secret is never kept in an idempotency record", () => {
  async function idempotencyRecords(userId: string): Promise<string> {
    const out = await env.deps.db.doc.send(
      new QueryCommand({
        TableName: env.deps.db.table,
        KeyConditionExpression: "pk = :p AND begins_with(sk, :s)",
        ExpressionAttributeValues: { ":p": `USER#${userId}`, ":s": "IDEMPOTENCY#" },
      }),
    );
    return JSON.stringify(out.Items ?? []);
  }

  it("create and rotate: the record holds no secret; a replay changes nothing and answers secret null", async () => {
    const user = await env.user();
    const body = { url: receiver.url, events: ["*"] };
    const created = ok(await user.call("POST", "/webhook-endpoints", body, { "Idempotency-Key": "create-1" }), 201);
    const rotated = ok(
      await user.call("POST", `/webhook-endpoints/${created.body.id}/rotate-secret`, undefined, {
        "Idempotency-Key": "rotate-1",
      }),
    );
    const records = await idempotencyRecords(user.userId);
    expect(records).toContain("completed");
    expect(records).not.toContain(created.body.secret);
    expect(records).not.toContain(rotated.body.secret);
    expect(records).not.toContain("whsec_");

    const replayedCreate = await user.call("POST", "/webhook-endpoints", body, { "Idempotency-Key": "create-1" });
    expect(replayedCreate.status).toBe(201);
    expect(replayedCreate.headers.get("idempotent-replayed")).toBe("true");
    expect(replayedCreate.body).toEqual({ ...created.body, secret: null });
    const replayedRotate = await user.call("POST", `/webhook-endpoints/${created.body.id}/rotate-secret`, undefined, {
      "Idempotency-Key": "rotate-1",
    });
    expect(replayedRotate.status).toBe(200);
    expect(replayedRotate.body).toEqual({ ...rotated.body, secret: null });
    // Nothing ran twice: one endpoint, and the rotated secret still signs alone with the first.
    expect(ok(await user.call("GET", "/webhook-endpoints")).body).toHaveLength(1);
    const start = receiver.received.length;
    await newClient(user);
    await env.drainStream();
    const [delivery] = receiver.received.slice(start);
    expect(String(delivery!.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    expect([accepts(created.body.secret, delivery!), accepts(rotated.body.secret, delivery!)]).toEqual([true, true]);
  });
});
