import { beforeAll, expect, it } from "vitest";
import { handleStreamBatch, STOP_TAKING_RECORDS_MS } from "@invoicing/core/stream/subscriber";
import { createStreamReader } from "@invoicing/local/stream-reader";
import { createTestEnv, type TestEnv } from "../support/env";

/**
 * Issue 30 D: the subscriber stops taking records when its Lambda is close to its timeout, and
 * reports the rest as failed from there (ReportBatchItemFailures), so they come again in the next
 * invocation — instead of the function being killed mid-record and the whole batch coming again.
 * Every record is handled exactly once in the end; each invocation handles at least one.
 */
let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});

it("near the deadline the batch stops after its first record; the rest come again, none lost or doubled", async () => {
  const user = await env.user();
  for (const name of ["A", "B", "C"]) expect((await user.call("POST", "/clients", { name })).status).toBe(201);

  const reader = createStreamReader(env.deps, {
    endpoint: env.endpoint,
    tableName: env.tableName,
    // A Lambda with 29 s left at every record: under the bound, so only the first record is taken.
    handle: (records) => handleStreamBatch(env.deps, records, { remainingMs: () => STOP_TAKING_RECORDS_MS - 1000 }),
  });
  try {
    // Each drain is one invocation; it stops at the first record reported failed, as Lambda would
    // retry from it. The user's three changes are taken one per invocation.
    const seen: number[] = [];
    for (let i = 0; i < 8; i++) {
      await reader.drain();
      seen.push(((await user.call("GET", "/events")).body as unknown[]).length);
    }
    expect([...new Set(seen)]).toEqual([1, 2, 3]);
  } finally {
    reader.close();
  }
  const events = (await user.call("GET", "/events")).body as { type: string; data: { name: string } }[];
  expect(events.map((e) => `${e.type} ${e.data.name}`).reverse()).toEqual([
    "client.created A",
    "client.created B",
    "client.created C",
  ]);
});

it("with time to spare the whole batch is taken in one invocation", async () => {
  const user = await env.user();
  for (const name of ["D", "E"]) expect((await user.call("POST", "/clients", { name })).status).toBe(201);
  const reader = createStreamReader(env.deps, {
    endpoint: env.endpoint,
    tableName: env.tableName,
    handle: (records) => handleStreamBatch(env.deps, records, { remainingMs: () => 120_000 }),
  });
  try {
    await reader.drain();
  } finally {
    reader.close();
  }
  const events = (await user.call("GET", "/events")).body as { data: { name: string } }[];
  expect(events.map((e) => e.data.name).sort()).toEqual(["D", "E"]);
});
