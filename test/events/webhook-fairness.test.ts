import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Context } from "aws-lambda";
import { jobs } from "@invoicing/core/jobs/all";
import { postWebhook } from "@invoicing/core/webhooks/post";
import { createTestEnv, type TestEnv, type TestUser } from "../support/env";
import { newClient, ok } from "../invoices/fixtures";
import { startReceiver, type Receiver } from "./receiver";

/**
 * Fairness of webhook delivery (docs/events.md, "Fairness"): what one user's dead receivers may cost
 * everyone else, the attempt timeout that includes the DNS lookup, the job's deadline, and the
 * disabling of an endpoint that has failed for days. No timed assertions: counts and order only.
 */
const TIMEOUT_MS = 3_000;
let env: TestEnv;
let receiver: Receiver;
let dead: Receiver;

beforeAll(async () => {
  env = await createTestEnv({ extraDeps: { webhookPolicy: { allowPrivate: true, timeoutMs: TIMEOUT_MS } } });
  receiver = await startReceiver();
  dead = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await dead.close();
});

async function endpoint(user: TestUser, url: string, events = ["client.created", "client.updated"]) {
  return ok(await user.call("POST", "/webhook-endpoints", { url, events }), 201).body as { id: number };
}

describe("one user with ten endpoints that never answer", () => {
  it("costs one attempt per endpoint per job run and at most half the slots; another user's retry goes in the first wave", async () => {
    dead.script.push(...Array(200).fill("hang"));
    const hog = await env.user();
    for (let i = 0; i < 10; i++) await endpoint(hog, dead.url);
    for (let i = 0; i < 4; i++) await newClient(hog);
    const beforeFirst = dead.received.length;
    await env.drainStream();
    // The subscriber: each dead endpoint failed once; its other first attempts were left to the job.
    expect(dead.received.length - beforeFirst).toBe(10);

    // Another user's delivery failed once, a little later: its retry is due after all of the hog's.
    env.clock.advance(30_000);
    const other = await env.user();
    await endpoint(other, receiver.url, ["client.created"]);
    receiver.script.push(500);
    const start = receiver.received.length;
    await newClient(other);
    await env.drainStream();
    expect(receiver.received.slice(start).map((r) => r.answered)).toEqual([500]);

    const hangsBefore = dead.received.length;
    let hangsBeforeOther: number | undefined;
    const arrivals = receiver.received.length;
    const watcher = setInterval(() => {
      if (hangsBeforeOther === undefined && receiver.received.length > arrivals)
        hangsBeforeOther = dead.received.length - hangsBefore;
    }, 1);
    const result = await jobs.webhooks!(env.deps, new Date(env.clock.now.getTime() + 2 * 60_000));
    clearInterval(watcher);

    // 40 attempts of the hog's were due (10 retries, 30 first attempts); one per endpoint was made.
    expect(dead.received.length - hangsBefore).toBe(10);
    expect(result).toMatchObject({ succeeded: 1, failed: 10, deferred: 30 });
    expect(receiver.received.slice(arrivals).map((r) => r.answered)).toEqual(["ok"]);
    // Users take turns and the hog holds at most 4 of the 8 slots: the other user's retry started
    // with the first wave, not behind the hog's hanging attempts.
    expect(hangsBeforeOther).toBeLessThanOrEqual(4);
  });
});

describe("the attempt timeout includes the DNS lookup", () => {
  it("a host whose lookup never answers fails the attempt at the timeout", async () => {
    const outcome = await postWebhook("https://never-resolves.example/hooks", {}, "{}", {
      allowPrivate: false,
      timeoutMs: 500,
      lookup: () => new Promise(() => {}),
    });
    expect(outcome).toEqual({ ok: false, responseStatus: null, error: "no answer within 500 ms" });
  });
});

describe("the job's deadline", () => {
  it("starts no attempt when too little time is left; what it left stays due for the next run", async () => {
    // A table of its own: nothing else due in it.
    const env = await createTestEnv({ extraDeps: { webhookPolicy: { allowPrivate: true, timeoutMs: TIMEOUT_MS } } });
    const user = await env.user();
    const { id } = await endpoint(user, receiver.url, ["client.created"]);
    receiver.script.push(500, 500);
    await newClient(user);
    await newClient(user);
    await env.drainStream(); // the first fails (500), the second is left for the job
    const now = new Date(env.clock.now.getTime() + 2 * 60_000);
    const start = receiver.received.length;

    // Five seconds left: less than an attempt's timeout and the writes that record it.
    const late = await jobs.webhooks!(env.deps, now, { deadline: Date.now() + 5_000 });
    expect(late).toMatchObject({ changed: 0, succeeded: 0, failed: 0 });
    expect(late.deferred).toBe(2);
    expect(receiver.received.length).toBe(start);

    // A run with time makes them.
    const next = await jobs.webhooks!(env.deps, now, { deadline: Date.now() + 60_000 });
    expect(next).toMatchObject({ failed: 1 });
    expect(receiver.received.slice(start).map((r) => r.answered)).toEqual([500]);
    const third = await jobs.webhooks!(env.deps, new Date(now.getTime() + 10 * 60_000));
    expect(third).toMatchObject({ succeeded: 2 });
    const list = ok(await user.call("GET", `/webhook-endpoints/${id}/deliveries`)).body as { status: string }[];
    expect(list.filter((d) => d.status === "succeeded")).toHaveLength(2);
  });
});

describe("a disabled endpoint's backlog", () => {
  it("fails for good in one run: dropping an attempt says nothing of the receiver, so it stops nothing", async () => {
    const env = await createTestEnv({ extraDeps: { webhookPolicy: { allowPrivate: true, timeoutMs: TIMEOUT_MS } } });
    const user = await env.user();
    const { id } = await endpoint(user, receiver.url, ["client.created"]);
    receiver.script.push(503);
    for (let i = 0; i < 3; i++) await newClient(user);
    await env.drainStream(); // the first failed (its retry pending); the other two were left to the job
    ok(await user.call("PATCH", `/webhook-endpoints/${id}`, { enabled: false }));
    const start = receiver.received.length;
    const result = await jobs.webhooks!(env.deps, new Date(env.clock.now.getTime() + 2 * 60_000));
    expect(result).toMatchObject({ succeeded: 0, failed: 0, dropped: 3, deferred: 0 });
    expect(receiver.received.length).toBe(start);
    const list = ok(await user.call("GET", `/webhook-endpoints/${id}/deliveries`)).body as { error: string }[];
    expect(list.filter((d) => d.error === "the endpoint is disabled")).toHaveLength(3);
  });
});

describe("the Lambda handler's deadline", () => {
  it("is the invocation's remaining time (context.getRemainingTimeInMillis)", async () => {
    const env = await createTestEnv({ extraDeps: { webhookPolicy: { allowPrivate: true, timeoutMs: TIMEOUT_MS } } });
    const user = await env.user();
    await endpoint(user, receiver.url, ["client.created"]);
    receiver.script.push(500);
    await newClient(user);
    await env.drainStream(); // failed; the retry is due a minute later by the test clock, long past by the wall clock
    const saved = { ...process.env };
    Object.assign(process.env, {
      DYNAMODB_ENDPOINT: env.endpoint,
      TABLE_NAME: env.tableName,
      WEBHOOKS_ALLOW_PRIVATE: "1",
    });
    let handler: (event: unknown, context: Context) => Promise<Record<string, unknown>>;
    try {
      // The WebhooksJob Lambda's entry: its dependencies come from the environment, at import.
      ({ handler } = await import("@invoicing/functions/lambda/jobs/webhooks"));
    } finally {
      process.env = saved;
    }
    const context = (remaining: number) => ({ getRemainingTimeInMillis: () => remaining }) as Context;
    const start = receiver.received.length;
    expect(await handler({}, context(5_000))).toMatchObject({ changed: 0, deferred: 1 });
    expect(receiver.received.length).toBe(start);
    expect(await handler({}, context(60_000))).toMatchObject({ succeeded: 1, deferred: 0 });
    expect(receiver.received.slice(start).map((r) => r.answered)).toEqual(["ok"]);
  });
});

describe("an endpoint that fails for days", () => {
  const DAY = 86_400_000;

  it("is disabled after failing for 5 days with no success, with a webhook_endpoint.disabled event", async () => {
    const env = await createTestEnv({ extraDeps: { webhookPolicy: { allowPrivate: true, timeoutMs: TIMEOUT_MS } } });
    const failing = await startReceiver();
    failing.script.push(...Array(50).fill(503));
    try {
      const user = await env.user();
      const { id } = await endpoint(user, failing.url);
      const watcher = await endpoint(user, receiver.url, ["webhook_endpoint.disabled"]);
      const t0 = env.clock.now.getTime();
      const client = await newClient(user);
      await env.drainStream(); // day 0: the first failure starts the run of failures
      expect(failing.received).toHaveLength(1);

      env.clock.set(new Date(t0 + 3 * DAY).toISOString());
      ok(await user.call("PATCH", `/clients/${client.id}`, { name: "Day three" }));
      await env.drainStream();
      // An endpoint already failing is left to the job: the subscriber's batch does not wait on it.
      expect(failing.received).toHaveLength(1);
      expect(await jobs.webhooks!(env.deps, env.clock.now)).toMatchObject({ failed: 1 });
      expect(ok(await user.call("GET", `/webhook-endpoints/${id}`)).body.enabled).toBe(true);

      env.clock.set(new Date(t0 + 5 * DAY + 60_000).toISOString());
      ok(await user.call("PATCH", `/clients/${client.id}`, { name: "Day five" }));
      await env.drainStream();
      const start = receiver.received.length;
      expect(await jobs.webhooks!(env.deps, env.clock.now)).toMatchObject({ failed: 1 });
      await env.drainStream(); // the endpoint's own change
      expect(ok(await user.call("GET", `/webhook-endpoints/${id}`)).body).toMatchObject({ id, enabled: false });

      const events = ok(await user.call("GET", "/events?type=webhook_endpoint.disabled")).body;
      expect(events).toEqual([
        {
          id: expect.any(String),
          type: "webhook_endpoint.disabled",
          createdAt: expect.any(String),
          resourceType: "webhook_endpoint",
          resourceId: id,
          data: {
            id,
            url: failing.url,
            events: ["client.created", "client.updated"],
            description: null,
            enabled: false,
            createdAt: expect.any(String),
          },
        },
      ]);
      // The other endpoint, subscribed to it, was told; no secret in what it got.
      const told = receiver.received.slice(start).map((r) => JSON.parse(r.body));
      expect(told.map((e) => [e.type, e.resourceId])).toEqual([["webhook_endpoint.disabled", id]]);
      expect(JSON.stringify(told)).not.toContain("whsec_");
      expect(watcher.id).not.toBe(id);
      // Its backlog fails for good, without a POST.
      const sent = failing.received.length;
      expect(await jobs.webhooks!(env.deps, new Date(env.clock.now.getTime() + DAY))).toMatchObject({
        failed: 0,
        dropped: 3,
      });
      expect(failing.received.length).toBe(sent);

      // Enabled again by its owner: delivered to again at once, a fresh run of failures.
      failing.script.length = 0;
      ok(await user.call("PATCH", `/webhook-endpoints/${id}`, { enabled: true }));
      await env.drainStream();
      ok(await user.call("PATCH", `/clients/${client.id}`, { name: "Back" }));
      await env.drainStream();
      expect(failing.received.slice(sent).map((r) => JSON.parse(r.body).data.name)).toEqual(["Back"]);
    } finally {
      await failing.close();
    }
  });

  it("a success in between starts the count again", async () => {
    const env = await createTestEnv({ extraDeps: { webhookPolicy: { allowPrivate: true, timeoutMs: TIMEOUT_MS } } });
    const flaky = await startReceiver();
    try {
      const user = await env.user();
      const { id } = await endpoint(user, flaky.url);
      const t0 = env.clock.now.getTime();
      flaky.script.push(503);
      const client = await newClient(user);
      await env.drainStream();
      env.clock.set(new Date(t0 + 3 * DAY).toISOString());
      ok(await user.call("PATCH", `/clients/${client.id}`, { name: "Answered" }));
      await env.drainStream();
      expect(await jobs.webhooks!(env.deps, env.clock.now)).toMatchObject({ succeeded: 2, failed: 0 });
      env.clock.set(new Date(t0 + 5 * DAY + 60_000).toISOString());
      flaky.script.push(503);
      ok(await user.call("PATCH", `/clients/${client.id}`, { name: "Failed again" }));
      await env.drainStream(); // not failing any more: the subscriber attempts it, and it fails
      expect(flaky.received.at(-1)!.answered).toBe(503);
      await env.drainStream();
      expect(ok(await user.call("GET", `/webhook-endpoints/${id}`)).body.enabled).toBe(true);
    } finally {
      await flaky.close();
    }
  });
});
