import { Hono } from "hono";
import { accessLogFormat } from "../../infra/access-log";
import { afterEach, beforeAll, expect, it, vi } from "vitest";
import { optimistic, Raced } from "@invoicing/core/db/optimistic";
import { errorFields, log } from "@invoicing/core/observability/context-log";
import { withDeadline } from "@invoicing/core/db/deadline";
import { handleStreamBatch } from "@invoicing/core/stream/subscriber";
import { createStreamReader } from "@invoicing/local/stream-reader";
import type { AppEnv } from "@invoicing/functions/http/app-env";
import { buildApp } from "@invoicing/functions/app/build-app";
import { createTestEnv, request, type TestEnv } from "../support/env";

/**
 * Issue 30, observability: every app log line is one JSON object with the request id and, once the
 * key named the user, the user id — whatever code wrote it, without passing them down. And the
 * optimistic loop's exhaustion is counted as a CloudWatch metric (EMF line).
 */
let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterEach(() => vi.restoreAllMocks());

function capture(): string[] {
  const lines: string[] = [];
  for (const method of ["log", "warn", "error"] as const)
    vi.spyOn(console, method).mockImplementation((line: unknown) => void lines.push(String(line)));
  return lines;
}

// A route whose use case logs deep down, knowing nothing of the request.
const probe = new Hono<AppEnv>().get("/log-probe", async (c) => {
  await new Promise((resolve) => setTimeout(resolve, 1)); // across an await: the scope follows
  log("info", "deep in a use case", { step: 1 });
  return c.json({ ok: true });
});

it("a request's lines carry its request id and the user id of its key", async () => {
  const user = await env.user();
  const app = buildApp(env.deps, [probe]);
  const lines = capture();
  const res = await request(app, "GET", "/log-probe", undefined, {
    Authorization: `Bearer ${user.key}`,
    "X-Request-Id": "req-abc.1",
  });
  expect(res.status).toBe(200);
  const line = lines.map((l) => JSON.parse(l)).find((l) => l.message === "deep in a use case");
  expect(line).toMatchObject({
    level: "info",
    message: "deep in a use case",
    requestId: "req-abc.1",
    userId: user.userId,
    source: "api",
    step: 1,
  });
  expect(Date.parse(line.timestamp)).not.toBeNaN();
});

it("two concurrent requests keep their own ids", async () => {
  const [alice, bob] = [await env.user(), await env.user()];
  const app = buildApp(env.deps, [probe]);
  const lines = capture();
  await Promise.all([
    request(app, "GET", "/log-probe", undefined, { Authorization: `Bearer ${alice.key}`, "X-Request-Id": "a" }),
    request(app, "GET", "/log-probe", undefined, { Authorization: `Bearer ${bob.key}`, "X-Request-Id": "b" }),
  ]);
  const found = lines
    .map((l) => JSON.parse(l))
    .filter((l) => l.message === "deep in a use case")
    .map((l) => `${l.requestId}:${l.userId}`)
    .sort();
  expect(found).toEqual([`a:${alice.userId}`, `b:${bob.userId}`]);
});

it("the optimistic loop's exhaustion is a metric point, OptimisticLoopExhausted", async () => {
  const lines = capture();
  const error = await optimistic("invoice", async () => {
    throw new Raced();
  }).catch((e: unknown) => e);
  expect((error as { code?: string }).code).toBe("service_unavailable");
  const metric = lines.map((l) => JSON.parse(l)).find((l) => l._aws);
  expect(metric).toMatchObject({
    _aws: {
      CloudWatchMetrics: [
        {
          Namespace: "Invoicing",
          Dimensions: [["service", "stage"]],
          Metrics: [{ Name: "OptimisticLoopExhausted", Unit: "Count" }],
        },
      ],
    },
    OptimisticLoopExhausted: 1,
    service: "invoicing",
    stage: "local",
  });
});

// Issue 39 item 13: an error is logged with its message and stack, never with what they may quote.
it("an error's message and stack are logged, with addresses, keys, processor secrets and tokens redacted", () => {
  const token = "Zx9".repeat(12);
  const error = new TypeError(
    `cannot send to ana@example.com with inv_u1_AbCdEfGh12345678 (sk_live_51Habc, whsec_q9Z+/=, Bearer abc.def) at /public/invoices/${token}`,
  );
  const fields = errorFields(error);
  expect(fields.error).toBe("TypeError");
  expect(fields.errorMessage).toBe(
    "cannot send to <email> with <api-key> (<processor-key>, <webhook-secret>, Bearer <redacted>) at /public/invoices/<token>",
  );
  expect(fields.stack).toMatch(/^TypeError: cannot send to <email>/);
  expect(fields.stack).toMatch(/\n\s+at /); // frames kept
  for (const secret of ["ana@example.com", "inv_u1", "sk_live", "whsec_q9", token])
    expect(JSON.stringify(fields)).not.toContain(secret);
  expect(errorFields("a string")).toEqual({ error: "string" });
});

it("core's own warnings carry the message: a failing stream record says why", async () => {
  const user = await env.user();
  expect((await user.call("POST", "/clients", { name: "Logged" })).status).toBe(201);
  // Every table call of the batch is past its deadline (core/src/db/deadline.ts): the first record
  // that writes fails, with an AbortError, and is logged.
  const reader = createStreamReader(env.deps, {
    endpoint: env.endpoint,
    tableName: env.tableName,
    handle: (records) => withDeadline(Date.now() - 1, () => handleStreamBatch(env.deps, records)),
  });
  const lines = capture();
  try {
    await reader.drain();
  } finally {
    reader.close();
  }
  const line = lines
    .map((l) => JSON.parse(l))
    .find((l) => l.message === "stream record failed; it will be delivered again");
  expect(line).toMatchObject({ error: "AbortError", errorMessage: expect.any(String) });
  expect(line.errorMessage.length).toBeGreaterThan(0);
  expect(line.stack).toMatch(/^AbortError/);
});

// Issue 39 item 6: the access log's integrationRequestId is the Lambda invocation's id, which every
// line of the request carries as awsRequestId: the two logs join on it.
it("a request's lines carry the Lambda invocation's id, which the access log records", async () => {
  const user = await env.user();
  const app = buildApp(env.deps, [probe]);
  const lines = capture();
  const res = await app.request(
    "/log-probe",
    { headers: { Authorization: `Bearer ${user.key}`, "X-Request-Id": "client-chosen" } },
    { lambdaContext: { awsRequestId: "8f2c1a7e-invocation" } },
  );
  expect(res.status).toBe(200);
  const line = lines.map((l) => JSON.parse(l)).find((l) => l.message === "deep in a use case");
  expect(line).toMatchObject({ requestId: "client-chosen", awsRequestId: "8f2c1a7e-invocation" });
  expect(accessLogFormat.integrationRequestId).toBe('"$context.integration.requestId"');
});
