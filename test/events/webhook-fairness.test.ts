import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Context } from "aws-lambda";
import { jobs } from "@invoicing/core/jobs/all";
import { postWebhook } from "@invoicing/core/webhooks/post";
import { createTestEnv, type TestUser } from "../support/env";
import { newClient, ok } from "../invoices/fixtures";
import { inFlightAt, startReceiver, type Receiver } from "./receiver";

/**
 * Fairness of webhook delivery (docs/events.md, "Fairness"): what one user's dead receivers may cost
 * everyone else, the attempt timeout that includes the DNS lookup, the job's deadline, and the
 * disabling of an endpoint that has failed for days. No timed assertions and no sampling: order and
 * concurrency are read from what the receivers record (every arrival and every end numbered on one
 * counter), and a receiver that "does not answer" holds its requests behind a gate that the test
 * opens once it has seen what it looks for, so no test waits for an attempt's timeout.
 */
// Longer than any test here holds a request: a held request is ended by the test's gate, never by
// the sender's timeout, however slow the machine. (A broken rule shows as a request the test waits
// for that comes only once the timeout has ended others: it fails then, a minute in.)
const policy = { webhookPolicy: { allowPrivate: true, timeoutMs: 60_000 } };
const MINUTE = 60_000;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
});

async function endpoint(user: TestUser, url: string, events = ["client.created", "client.updated"]) {
  return ok(await user.call("POST", "/webhook-endpoints", { url, events }), 201).body as { id: number };
}

/** A receiver whose every request waits behind its gate and is then answered 503. */
async function deadReceiver(): Promise<Receiver> {
  const dead = await startReceiver();
  dead.otherwise = { hold: 503 };
  return dead;
}

describe("one user with ten endpoints that do not answer", () => {
  it("costs one attempt per endpoint per job run and at most 4 of the 8 slots at once; another user's attempts are not held behind them", async () => {
    const env = await createTestEnv({ extraDeps: policy });
    const dead = await deadReceiver();
    const live = await startReceiver();
    try {
      const hog = await env.user();
      for (let i = 0; i < 10; i++) await endpoint(hog, `${dead.url}/${i}`);
      for (let i = 0; i < 4; i++) await newClient(hog);
      dead.openGate();
      await env.drainStream();
      // The subscriber: each dead endpoint failed once; its other first attempts were left to the job.
      expect(dead.received).toHaveLength(10);
      dead.closeGate();

      // Another user's delivery failed once, a little later: its retry is due after all of the hog's.
      // Its second event is left for the job too (an endpoint takes no more work in a run after a
      // failure): the job has two attempts for it, one after the other.
      env.clock.advance(30_000);
      const other = await env.user();
      await endpoint(other, live.url, ["client.created"]);
      live.script.push(500, { hold: "ok" });
      await newClient(other);
      await newClient(other);
      await env.drainStream();
      expect(live.received.map((r) => r.answered)).toEqual([500]);

      const run = jobs.webhooks!(env.deps, new Date(env.clock.now.getTime() + 2 * MINUTE));
      // The other user's first attempt arrives while every attempt of the hog's is held at the gate:
      // it did not wait for a slot of theirs. (Were it queued behind them, it could come only once
      // the sender gave one of them up, at its timeout: the wait ends there and the checks fail.)
      await Promise.race([Promise.all([live.arrived(2), dead.arrived(10 + 4)]), dead.givenUp()]);
      const theirs = () => dead.received.slice(10);
      expect(theirs().filter((r) => r.ended !== undefined)).toEqual([]);
      expect(live.received).toHaveLength(2);
      // Its answer lets its second attempt start: that arrival comes after the sender has recorded
      // the first, long after every attempt the hog's first wave started had arrived. Then: 4 of the
      // hog's in flight, not 5 (the per-user bound, across however many workers its batch took).
      live.openGate();
      await live.arrived(3);
      expect(inFlightAt(theirs(), live.received[2]!.seq)).toHaveLength(4);

      dead.openGate();
      const result = await run;
      // 40 attempts of the hog's were due (10 retries, 30 first attempts); one per endpoint was made.
      expect(theirs()).toHaveLength(10);
      expect(new Set(theirs().map((r) => r.path)).size).toBe(10);
      expect(result).toMatchObject({ succeeded: 2, failed: 10, deferred: 30 });
      expect(live.received.slice(1).map((r) => r.answered)).toEqual([{ hold: "ok" }, "ok"]);
      expect(Math.max(...theirs().map((r) => inFlightAt(theirs(), r.seq).length))).toBe(4);
    } finally {
      await dead.close();
      await live.close();
    }
  });
});

describe("users take turns for the slots", () => {
  it("two users filling all 8 slots between them leave a third user's retry a place in the first wave", async () => {
    const env = await createTestEnv({ extraDeps: policy });
    const [a, c] = [await deadReceiver(), await deadReceiver()];
    const live = await startReceiver();
    try {
      // Two users with 5 and 4 endpoints that do not answer, one failed attempt each; a third user's
      // one delivery failed a little later. Their 10 endpoints go to one worker (one batch), where
      // only the turns decide who has the 8 slots: in due order, the third user would come last.
      const first = await env.user();
      const second = await env.user();
      for (let i = 0; i < 5; i++) await endpoint(first, `${a.url}/${i}`, ["client.created"]);
      for (let i = 0; i < 4; i++) await endpoint(second, `${c.url}/${i}`, ["client.created"]);
      await newClient(first);
      await newClient(second);
      a.openGate();
      c.openGate();
      await env.drainStream();
      expect([a.received.length, c.received.length]).toEqual([5, 4]);
      a.closeGate();
      c.closeGate();
      env.clock.advance(30_000);
      const third = await env.user();
      await endpoint(third, live.url, ["client.created"]);
      live.script.push(500);
      await newClient(third);
      await env.drainStream();
      expect(live.received.map((r) => r.answered)).toEqual([500]);

      const run = jobs.webhooks!(env.deps, new Date(env.clock.now.getTime() + 2 * MINUTE));
      // The retry arrives while all of the two users' attempts are held: it had a slot of the first
      // wave. Without turns the first two users take 4 + 4, and it waits until the sender gives one
      // of theirs up at its timeout: the wait ends there, and the checks fail.
      await Promise.race([live.arrived(2), a.givenUp(), c.givenUp()]);
      const held = [...a.received.slice(5), ...c.received.slice(4)];
      expect(held.filter((r) => r.ended !== undefined)).toEqual([]);
      expect(live.received).toHaveLength(2);
      expect(inFlightAt(held, live.received[1]!.seq).length).toBeLessThanOrEqual(7);

      a.openGate();
      c.openGate();
      expect(await run).toMatchObject({ succeeded: 1, failed: 9, deferred: 0 });
      expect([a.received.length, c.received.length]).toEqual([10, 8]);
    } finally {
      await Promise.all([a.close(), c.close(), live.close()]);
    }
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
    const env = await createTestEnv({ extraDeps: policy });
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
    const env = await createTestEnv({ extraDeps: policy });
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
    const env = await createTestEnv({ extraDeps: policy });
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
    const env = await createTestEnv({ extraDeps: policy });
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
    const env = await createTestEnv({ extraDeps: policy });
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
