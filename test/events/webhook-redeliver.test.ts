import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Webhook } from "standardwebhooks";
import { jobs } from "@invoicing/core/jobs/all";
import { createTestEnv, expectProblem, type TestEnv, type TestUser } from "../support/env";
import { newClient, ok } from "../invoices/fixtures";
import { startReceiver, type Receiver } from "./receiver";

/**
 * Redelivering a webhook (docs/events.md, "Redelivering"): the endpoint's owner through
 * `POST /webhook-endpoints/{id}/deliveries/{event}/redeliver` (made by the webhooks job), the
 * operator through `npm run jobs -- redeliver-webhook` (made at once, in its own process).
 */
const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
let env: TestEnv;
let receiver: Receiver;

beforeAll(async () => {
  env = await createTestEnv({ extraDeps: { webhookPolicy: { allowPrivate: true, timeoutMs: 5_000 } } });
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

/** An endpoint whose delivery of one client.created was given up after its seven attempts. */
async function givenUp(user: TestUser): Promise<{ endpointId: number; secret: string; eventId: string }> {
  const { id, secret } = ok(
    await user.call("POST", "/webhook-endpoints", { url: receiver.url, events: ["client.created"] }),
    201,
  ).body;
  receiver.script.push(...Array(7).fill(503));
  await newClient(user);
  await env.drainStream();
  let t = env.clock.now.getTime();
  for (const minutes of [1, 5, 30, 120, 360, 1440]) {
    t += (minutes + 1) * 60_000;
    await jobs.webhooks!(env.deps, new Date(t));
  }
  env.clock.set(new Date(t + 60_000).toISOString());
  const list = ok(await user.call("GET", `/webhook-endpoints/${id}/deliveries`)).body;
  expect(list[0]).toMatchObject({ attempt: 7, status: "failed", nextAttemptAt: null });
  return { endpointId: id, secret, eventId: list[0].eventId };
}

const path = (endpointId: number, eventId: string) =>
  `/webhook-endpoints/${endpointId}/deliveries/${eventId}/redeliver`;

describe("POST /webhook-endpoints/{id}/deliveries/{event}/redeliver", () => {
  it("queues one more attempt of a given-up delivery, which the webhooks job makes; not twice at once", async () => {
    const user = await env.user();
    const { endpointId, secret, eventId } = await givenUp(user);
    const res = ok(await user.call("POST", path(endpointId, eventId)));
    expect(res.body).toEqual({
      eventId,
      type: "client.created",
      attempt: 8,
      status: "pending",
      responseStatus: null,
      error: null,
      attemptedAt: null,
      nextAttemptAt: env.clock.now.toISOString(),
    });
    expectProblem(await user.call("POST", path(endpointId, eventId)), 422, "invalid_transition");

    const start = receiver.received.length;
    expect(await jobs.webhooks!(env.deps, env.clock.now)).toMatchObject({ succeeded: 1 });
    const [delivery] = receiver.received.slice(start);
    const payload = new Webhook(secret).verify(delivery!.body, delivery!.headers as Record<string, string>);
    expect(payload).toMatchObject({ id: eventId, type: "client.created" });
    const list = ok(await user.call("GET", `/webhook-endpoints/${endpointId}/deliveries`)).body;
    expect(list.map((d: { attempt: number; status: string }) => [d.attempt, d.status]).slice(0, 2)).toEqual([
      [8, "succeeded"],
      [7, "failed"],
    ]);
  });

  it("while a retry is pending: moves that retry to now instead of adding a copy", async () => {
    const user = await env.user();
    const { id } = ok(
      await user.call("POST", "/webhook-endpoints", { url: receiver.url, events: ["client.created"] }),
      201,
    ).body;
    receiver.script.push(503);
    await newClient(user);
    await env.drainStream(); // attempt 1 failed; attempt 2 due in a minute
    const [pending] = ok(await user.call("GET", `/webhook-endpoints/${id}/deliveries`)).body;
    expect(pending).toMatchObject({ attempt: 2, status: "pending" });
    const res = ok(await user.call("POST", path(id, pending.eventId)));
    expect(res.body).toMatchObject({ attempt: 2, status: "pending", nextAttemptAt: env.clock.now.toISOString() });
    const start = receiver.received.length;
    expect(await jobs.webhooks!(env.deps, env.clock.now)).toMatchObject({ succeeded: 1 });
    expect(receiver.received.length).toBe(start + 1);
    const list = ok(await user.call("GET", `/webhook-endpoints/${id}/deliveries`)).body;
    expect(list.map((d: { attempt: number; status: string }) => [d.attempt, d.status])).toEqual([
      [2, "succeeded"],
      [1, "failed"],
    ]);
  });

  it("a redelivery that fails is not retried by itself", async () => {
    const user = await env.user();
    const { endpointId, eventId } = await givenUp(user);
    ok(await user.call("POST", path(endpointId, eventId)));
    receiver.script.push(500);
    const lines = vi.spyOn(console, "log");
    try {
      expect(await jobs.webhooks!(env.deps, env.clock.now)).toMatchObject({ failed: 1 });
      // Counted for the operator (WebhookAttemptsFailed, an EMF metric line).
      expect(lines.mock.calls.filter((c) => String(c[0]).includes('"WebhookAttemptsFailed":1'))).toHaveLength(1);
    } finally {
      lines.mockRestore();
    }
    const list = ok(await user.call("GET", `/webhook-endpoints/${endpointId}/deliveries`)).body;
    expect(list[0]).toMatchObject({ attempt: 8, status: "failed", responseStatus: 500, nextAttemptAt: null });
    expect(await jobs.webhooks!(env.deps, new Date(env.clock.now.getTime() + 86_400_000))).toMatchObject({
      changed: 0,
    });
  });

  it("404 for an event the endpoint was never sent or another user's endpoint; 422 when disabled", async () => {
    const user = await env.user();
    const { endpointId, eventId } = await givenUp(user);
    expectProblem(await user.call("POST", path(endpointId, "evt_1_0")), 404, "not_found");
    const other = await env.user();
    expectProblem(await other.call("POST", path(endpointId, eventId)), 404, "not_found");
    ok(await user.call("PATCH", `/webhook-endpoints/${endpointId}`, { enabled: false }));
    expectProblem(await user.call("POST", path(endpointId, eventId)), 422, "invalid_transition");
  });
});

describe("npm run jobs -- redeliver-webhook (the operator's command)", () => {
  it("makes the attempt at once and prints it", async () => {
    const user = await env.user();
    const { endpointId, secret, eventId } = await givenUp(user);
    const start = receiver.received.length;
    const { stdout } = await run(
      process.execPath,
      [
        "--import",
        "tsx",
        "packages/local/src/jobs-cli.ts",
        "redeliver-webhook",
        "--user",
        user.userId,
        "--endpoint",
        String(endpointId),
        "--event",
        eventId,
      ],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          DYNAMODB_ENDPOINT: env.endpoint,
          TABLE_NAME: env.tableName,
          DATA_DIR: mkdtempSync(join(tmpdir(), "invoicing-cli-")),
          WEBHOOKS_ALLOW_PRIVATE: "1",
        },
        timeout: 120_000,
      },
    );
    const printed = JSON.parse(stdout.trim().split("\n").at(-1)!);
    expect(printed).toMatchObject({ eventId, attempt: 8, status: "succeeded", responseStatus: 204 });
    const [delivery] = receiver.received.slice(start);
    expect(new Webhook(secret).verify(delivery!.body, delivery!.headers as Record<string, string>)).toMatchObject({
      id: eventId,
    });
  }, 180_000);
});
