import { beforeAll, expect, it } from "vitest";
import { forgetRateLimits, takeRequest } from "@invoicing/core/limits/rate-limit";
import { createTestEnv, type TestEnv } from "../support/env";

/**
 * The bucket's two forms meet where the bucket has just emptied: its `tat` equals now. A request at
 * exactly that millisecond must be admitted like any other. Before, the container's memory said
 * "not busy" (tat > now is false) while the table's condition for that form wanted tat < now: the
 * write failed, the memory was set to the same tat, and all four attempts failed the same way —
 * a 429 "retry in 1 s" for a user at a fraction of its limit (seen in CI: a user's 13th request in
 * half a second refused).
 */
let env: TestEnv;

beforeAll(async () => {
  env = await createTestEnv();
});

it("a request at the very millisecond the bucket empties is admitted", async () => {
  forgetRateLimits();
  const key = { pk: "USER#edge", sk: "LIMITS" };
  const t0 = Date.parse("2026-11-27T12:00:00.000Z");
  // 50 a second: each request moves the bucket's time 20 ms on.
  await takeRequest(env.deps.db, key, { perSecond: 50 }, new Date(t0));
  await expect(takeRequest(env.deps.db, key, { perSecond: 50 }, new Date(t0 + 20))).resolves.toBeUndefined();
  // And it counted: the next at the same millisecond is the bucket's second place, also admitted.
  await expect(takeRequest(env.deps.db, key, { perSecond: 50 }, new Date(t0 + 20))).resolves.toBeUndefined();
});
