import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { jobs } from "@invoicing/core/jobs/all";
import { handOff } from "@invoicing/core/queue/in-process";
import type { WorkMessage } from "@invoicing/core/queue/port";
import { attemptsPrefix, type AttemptItem } from "@invoicing/core/webhooks/deliveries";
import { webhooksWorker } from "@invoicing/core/webhooks/webhooks-job";
import { createTestEnv, type TestEnv, type TestUser } from "../support/env";
import { newClient, ok } from "../invoices/fixtures";
import { startReceiver, type Receiver } from "./receiver";

/**
 * One attempt in flight per endpoint across all workers (docs/events.md, "Fairness";
 * packages/core/src/webhooks/lease.ts). A slow receiver holds its requests behind a gate the test
 * opens: no timed assertion, no sleep. Were each worker to start its own attempt of the slow
 * endpoint, its attempts would take every worker of the `webhooks` queue and the other user's
 * attempt would wait for the gate, which the test opens only after checking.
 */
const policy = { webhookPolicy: { allowPrivate: true, timeoutMs: 60_000 } };
const MINUTE = 60_000;
let slow: Receiver;
let live: Receiver;

beforeAll(async () => {
  [slow, live] = await Promise.all([startReceiver(), startReceiver()]);
});
afterAll(async () => {
  slow.openGate();
  await Promise.all([slow.close(), live.close()]);
});

async function endpoint(user: TestUser, url: string): Promise<number> {
  return (
    ok(await user.call("POST", "/webhook-endpoints", { url, events: ["client.created"] }), 201).body as { id: number }
  ).id;
}

async function pendingAttempts(env: TestEnv, user: TestUser, endpointId: number): Promise<AttemptItem[]> {
  const out = await env.deps.db.doc.send(
    new QueryCommand({
      TableName: env.deps.db.table,
      KeyConditionExpression: "pk = :p AND begins_with(sk, :s)",
      ExpressionAttributeValues: { ":p": `USER#${user.userId}`, ":s": attemptsPrefix(endpointId) },
      ConsistentRead: true,
    }),
  );
  return ((out.Items ?? []) as AttemptItem[]).filter((item) => item.status === "pending");
}

const message = (item: AttemptItem, now: string): WorkMessage => ({
  queue: "webhooks",
  now,
  userId: item.userId,
  keys: [{ pk: item.pk, sk: item.sk }],
  data: { jobClock: true },
});

describe("a slow endpoint's attempts in several workers", () => {
  it("only one reaches its receiver at a time; another user's attempt gets a worker meanwhile; each event is delivered once", async () => {
    const env = await createTestEnv({ extraDeps: policy });
    const [a, b] = [await env.user(), await env.user()];
    const slowId = await endpoint(a, slow.url);
    const liveId = await endpoint(b, live.url);
    // Every first attempt fails: each event then has one pending attempt (a retry, or a first
    // attempt the subscriber left to the job), due within a minute.
    slow.otherwise = 500;
    live.otherwise = 500;
    for (let i = 0; i < 8; i++) await newClient(a);
    await newClient(b);
    await env.drainStream();
    slow.otherwise = { hold: "ok" };
    live.otherwise = "ok";
    const ofA = await pendingAttempts(env, a, slowId);
    const ofB = await pendingAttempts(env, b, liveId);
    expect([ofA.length, ofB.length]).toEqual([8, 1]);
    const [slowBefore, liveBefore] = [slow.received.length, live.received.length];

    // Eight messages of the slow endpoint, one per batch: as many as the queue has workers (8),
    // then the other user's. Each is a worker run of its own, all at once.
    const now = new Date(env.clock.now.getTime() + 2 * MINUTE).toISOString();
    const runs = [...ofA, ...ofB].map((item) => handOff(env.deps, "webhooks", [message(item, now)], webhooksWorker));
    await Promise.race([live.arrived(liveBefore + 1), slow.arrived(slowBefore + 2)]);
    expect(slow.received.length - slowBefore).toBe(1);
    expect(slow.held()).toHaveLength(1);
    expect(live.received.length - liveBefore).toBe(1);

    slow.openGate();
    const results = await Promise.all(runs);
    const tally = { succeeded: 0, deferred: 0, failed: 0 };
    for (const result of results)
      for (const key of Object.keys(tally) as (keyof typeof tally)[]) tally[key] += result?.tally[key] ?? 0;
    // The slow endpoint's seven others stayed pending, due, for the next run.
    expect(tally).toEqual({ succeeded: 2, deferred: 7, failed: 0 });
    expect(await pendingAttempts(env, a, slowId)).toHaveLength(7);

    const job = await jobs.webhooks!(env.deps, new Date(now));
    expect(job).toMatchObject({ succeeded: 7, failed: 0, deferred: 0 });
    // Every event of the slow endpoint reached it once: none lost, none doubled.
    const delivered = slow.received.slice(slowBefore).map((r) => r.headers["webhook-id"]);
    expect(new Set(delivered).size).toBe(8);
    expect(delivered).toHaveLength(8);
    expect(new Set(delivered)).toEqual(new Set(ofA.map((item) => item.eventId)));
    expect(await pendingAttempts(env, a, slowId)).toEqual([]);
  });
});
