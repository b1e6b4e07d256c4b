import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@invoicing/core/clients/clients";
import type { Ctx } from "@invoicing/core/deps";
import { commit } from "@invoicing/core/db/commit";
import { DomainError } from "@invoicing/core/errors";
import {
  LEASE_MS,
  claimHook,
  claimKey,
  recordKey,
  releaseKey,
  type KeyRecord,
} from "@invoicing/core/idempotency/records";
import { requestFingerprint } from "@invoicing/functions/http/idempotency";
import { createTestEnv, expectProblem, type TestEnv, type TestUser } from "../support/env";
import { effectTransaction, gate, responseStore, type Gate } from "./faults";

/**
 * Concurrency and crash windows. A request is frozen at one DynamoDB call by a gate on the real
 * client (faults.ts), which is what a stalled or killed process leaves behind; time moves only by
 * the test clock, so leases and expiry are exact, never timed.
 */
let env: TestEnv;
const gates: Gate[] = [];

beforeAll(async () => {
  env = await createTestEnv();
});

afterEach(() => {
  for (const g of gates.splice(0)) {
    g.release();
    g.remove();
  }
});

function hold(matches: Parameters<typeof gate>[1]): Gate {
  const g = gate(env.deps.db, matches);
  gates.push(g);
  return g;
}

let counter = 0;
const freshKey = () => ({ "Idempotency-Key": `crash-${++counter}-${Math.random().toString(36).slice(2)}` });

async function readRecord(user: TestUser, idempotencyKey: string): Promise<KeyRecord | undefined> {
  const out = await env.deps.db.doc.send(
    new GetCommand({ TableName: env.tableName, Key: recordKey(user.userId, idempotencyKey) }),
  );
  return out.Item as KeyRecord | undefined;
}

async function clients(user: TestUser): Promise<{ id: number; name: string }[]> {
  const res = await user.call("GET", "/clients");
  expect(res.status).toBe(200);
  return res.body;
}

const ctxOf = (user: TestUser): Ctx => ({ ...env.deps, userId: user.userId });

/** Waits until `pending` is held at the gate; fails at once if it finishes without reaching it. */
async function heldAt(g: Gate, pending: Promise<{ status: number }>): Promise<void> {
  await Promise.race([
    g.reached,
    pending.then((r) => Promise.reject(new Error(`finished with ${r.status} before the gate`))),
  ]);
}

describe("concurrent requests with one key", () => {
  it("a concurrent pair gives one 201 and one 409; afterwards the 201 replays", async () => {
    const user = await env.user();
    const k = freshKey();
    const stall = hold(effectTransaction);
    const first = user.call("POST", "/clients", { name: "Pair" }, k);
    await heldAt(stall, first); // the first holds the key and is about to commit its change

    expectProblem(await user.call("POST", "/clients", { name: "Pair" }, k), 409, "idempotency_key_in_use");
    // While it runs, the other request's own 400 still comes first, and another body is 409, not 422.
    expectProblem(await user.call("POST", "/clients", { name: "" }, k), 400, "validation_error");
    expectProblem(await user.call("POST", "/clients", { name: "Other" }, k), 409, "idempotency_key_in_use");

    stall.release();
    const done = await first;
    expect(done.status).toBe(201);
    const again = await user.call("POST", "/clients", { name: "Pair" }, k);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(done.body);
    expect((await clients(user)).map((c) => c.name)).toEqual(["Pair"]);
  });

  it("any number of concurrent identical creates make exactly one record", async () => {
    const user = await env.user();
    const k = freshKey();
    const all = await Promise.all(Array.from({ length: 6 }, () => user.call("POST", "/clients", { name: "Crowd" }, k)));
    const created = all.filter((r) => r.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    for (const r of all) expect([201, 409]).toContain(r.status);
    for (const r of created) expect(r.body.id).toBe(created[0]!.body.id);
    expect(created.filter((r) => r.headers.get("idempotent-replayed") === null)).toHaveLength(1);
    expect((await clients(user)).map((c) => c.name)).toEqual(["Crowd"]);
  });
});

describe("crash windows", () => {
  it("a crash after the change and before the response is stored: retries never repeat it, then get its result", async () => {
    const user = await env.user();
    const k = freshKey();
    const crash = hold(responseStore);
    const doomed = user.call("POST", "/clients", { name: "Survivor" }, k);
    await heldAt(crash, doomed); // the change is committed; the process "dies" before storing the response

    const record = await readRecord(user, k["Idempotency-Key"]);
    expect(record).toMatchObject({ state: "committed", resultRef: expect.stringMatching(/^CLIENT#/) });
    expect(record!.response).toBeUndefined();
    const [made] = await clients(user);

    // Within the lease its owner may still be finishing: 409, and nothing is created.
    expectProblem(await user.call("POST", "/clients", { name: "Survivor" }, k), 409, "idempotency_key_in_use");
    expect(await clients(user)).toHaveLength(1);

    // After it, a retry gets the result of the change that happened, rebuilt and kept.
    env.clock.advance(LEASE_MS + 1);
    const retry = await user.call("POST", "/clients", { name: "Survivor" }, k);
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.headers.get("location")).toBe(`/clients/${made!.id}`);
    expect(retry.headers.get("etag")).toBe('"1"');
    expect(retry.body).toEqual(made);
    expect((await readRecord(user, k["Idempotency-Key"]))?.state).toBe("completed");
    const later = await user.call("POST", "/clients", { name: "Survivor" }, k);
    expect(later.body).toEqual(made);
    expectProblem(await user.call("POST", "/clients", { name: "Else" }, k), 422, "idempotency_key_reused");
    expect(await clients(user)).toEqual([made]);

    // Should the frozen request wake after all, it answers with its own result, still one record.
    crash.release();
    const woke = await doomed;
    expect(woke.status).toBe(201);
    expect(woke.body).toEqual(made);
    expect(await clients(user)).toHaveLength(1);
  });

  it("a crash before the change: after the lease a retry takes over, and the old request's late change fails", async () => {
    const user = await env.user();
    const k = freshKey();
    const stall = hold(effectTransaction);
    const old = user.call("POST", "/clients", { name: "Late" }, k);
    await heldAt(stall, old);
    expect((await readRecord(user, k["Idempotency-Key"]))?.state).toBe("in_progress");

    expectProblem(await user.call("POST", "/clients", { name: "Late" }, k), 409, "idempotency_key_in_use");
    env.clock.advance(LEASE_MS + 1);
    const retry = await user.call("POST", "/clients", { name: "Late" }, k);
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();

    stall.release(); // the old owner's transaction now meets a record that is not its own
    expectProblem(await old, 409, "idempotency_key_in_use");
    expect((await clients(user)).map((c) => c.id)).toEqual([retry.body.id]);
    const replay = await user.call("POST", "/clients", { name: "Late" }, k);
    expect(replay.body).toEqual(retry.body);
  });

  it("the record moves to committed in the change's own transaction, or not at all", async () => {
    const user = await env.user();
    const ctx = ctxOf(user);
    const claimed = await claimKey(ctx, "atomic", "print");
    if (!("claimed" in claimed)) throw new Error("expected a claim");
    const hooked: Ctx = { ...ctx, commitHook: claimHook(ctx, claimed.claimed) };

    // A change whose own condition fails takes the record's step down with it.
    const taken = await createClient(ctx, { name: "Existing" });
    const clash = commit(
      hooked,
      [
        {
          op: {
            Put: {
              TableName: env.tableName,
              Item: { ...taken, name: "Clash" },
              ConditionExpression: "attribute_not_exists(pk)",
            },
          },
          onConditionFailed: () => new DomainError("invalid_transition", "exists"),
        },
      ],
      taken,
    );
    await expect(clash).rejects.toMatchObject({ code: "invalid_transition" });
    expect((await readRecord(user, "atomic"))?.state).toBe("in_progress");

    // A change that succeeds carries the step and names its result.
    const made = await createClient(hooked, { name: "Made" });
    expect(await readRecord(user, "atomic")).toMatchObject({ state: "committed", resultRef: made.sk });
  });

  it("an error after the change keeps the key, and a retry gets the result at once", async () => {
    const user = await env.user();
    const ctx = ctxOf(user);
    const k = freshKey()["Idempotency-Key"];
    // What the middleware does for POST /clients {"name":"Kept"}, with the route failing after
    // its change (as a send whose email queueing throws would): claim, commit, error → release.
    const claimed = await claimKey(ctx, k, requestFingerprint("POST", "/clients", { name: "Kept" }));
    if (!("claimed" in claimed)) throw new Error("expected a claim");
    const made = await createClient({ ...ctx, commitHook: claimHook(ctx, claimed.claimed) }, { name: "Kept" });
    await releaseKey(ctx, claimed.claimed);
    const kept = await readRecord(user, k);
    expect(kept?.state).toBe("committed");
    expect(kept!.leaseUntil).toBeLessThanOrEqual(env.clock.now.getTime());

    // No waiting for a lease: the owner said it is done.
    const retry = await user.call("POST", "/clients", { name: "Kept" }, { "Idempotency-Key": k });
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body.id).toBe(made.id);
    expect((await clients(user)).map((c) => c.id)).toEqual([made.id]);
  });
});
