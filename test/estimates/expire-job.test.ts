import { describe, expect, it } from "vitest";
import type { Deps } from "@invoicing/core/deps";
import type { Db } from "@invoicing/core/db/dynamodb";
import { jobs } from "@invoicing/core/jobs/all";
import { runJobs } from "@invoicing/local/ticker";
import { createTestEnv, expectProblem, type TestEnv, type TestUser } from "../support/env";

/**
 * The `expire-estimates` job: a sent estimate whose validUntil is earlier
 * than now becomes expired; it reads only what is due and is safe to run twice. Each test has its
 * own table, so the job's counts are exact.
 */
const expire = jobs["expire-estimates"]!;
const at = (iso: string) => new Date(iso);

async function world(): Promise<{ env: TestEnv; user: TestUser; clientId: number }> {
  const env = await createTestEnv({ now: "2026-11-22T09:30:00.000Z" });
  const user = await env.user();
  const clientId = (await user.call("POST", "/clients", { name: "Umbrella", email: "ap@umbrella.test" })).body.id;
  return { env, user, clientId };
}

async function sentEstimate(user: TestUser, clientId: number, validUntil: string | null): Promise<number> {
  const est = await user.call("POST", "/estimates", {
    clientId,
    validUntil,
    lineItems: [{ description: "x", unitPrice: "10" }],
  });
  expect(est.status).toBe(201);
  expect((await user.call("POST", `/estimates/${est.body.id}/send`)).status).toBe(200);
  return est.body.id;
}

const statusOf = async (user: TestUser, id: number) =>
  (await user.call("GET", `/estimates/${id}`)).body.status as string;

/** The deps with every DynamoDB call recorded: command, index, and how many items came back. */
function recording(deps: Deps) {
  const calls: { command: string; index?: string; items?: number }[] = [];
  const real = deps.db.doc;
  const doc = Object.create(real) as Db["doc"];
  doc.send = (async (command: { constructor: { name: string }; input: { IndexName?: string } }) => {
    const out = await real.send(command as never);
    const items = (out as { Items?: unknown[] }).Items;
    calls.push({ command: command.constructor.name, index: command.input.IndexName, items: items?.length });
    return out;
  }) as Db["doc"]["send"];
  return { deps: { ...deps, db: { ...deps.db, doc } }, calls };
}

describe("expire-estimates job", () => {
  it("expires only sent estimates whose validUntil is earlier than now, once", async () => {
    const { env, user, clientId } = await world();
    const due = await sentEstimate(user, clientId, "2026-11-25");
    const exactlyNow = await sentEstimate(user, clientId, "2026-11-26");
    const later = await sentEstimate(user, clientId, "2026-12-31");
    const forever = await sentEstimate(user, clientId, null);
    const draft = (await user.call("POST", "/estimates", { clientId, validUntil: "2026-11-01" })).body.id;

    const first = await expire(env.deps, at("2026-11-26T00:00:00.000Z"));
    expect(first).toMatchObject({ job: "expire-estimates", now: "2026-11-26T00:00:00.000Z", changed: 1 });
    expect(await statusOf(user, due)).toBe("expired");
    const expired = await user.call("GET", `/estimates/${due}`);
    expect(expired.body.updatedAt).toBe("2026-11-26T00:00:00.000Z");
    expect(expired.headers.get("etag")).toBe('"3"');
    for (const id of [exactlyNow, later, forever]) expect(await statusOf(user, id)).toBe("sent");
    expect(await statusOf(user, draft)).toBe("draft");

    const again = await expire(env.deps, at("2026-11-26T00:00:00.000Z"));
    expect(again.changed).toBe(0);
    const next = await expire(env.deps, at("2026-11-26T00:00:00.001Z"));
    expect(next.changed).toBe(1);
    expect(await statusOf(user, exactlyNow)).toBe("expired");

    const lists = async (status: string) =>
      (await user.call("GET", `/estimates?status=${status}`)).body.map((e: { id: number }) => e.id);
    expect(await lists("expired")).toEqual([exactlyNow, due]);
    expect(await lists("sent")).toEqual([forever, later]);
  });

  it("reads only the due estimates, whatever else the table holds", async () => {
    const { env, user, clientId } = await world();
    // Not due: sent but valid for months, and drafts whose validUntil has long passed.
    for (let i = 0; i < 4; i++) await sentEstimate(user, clientId, "2027-06-01");
    for (let i = 0; i < 4; i++) await user.call("POST", "/estimates", { clientId, validUntil: "2026-11-01" });
    const due = [await sentEstimate(user, clientId, "2026-11-23"), await sentEstimate(user, clientId, "2026-11-24")];

    const { deps, calls } = recording(env.deps);
    const result = await expire(deps, at("2026-12-01T00:00:00.000Z"));
    expect(result.changed).toBe(2);
    const reads = calls.filter((c) => c.command !== "UpdateCommand");
    expect(reads.every((c) => c.command === "QueryCommand" && c.index === "byDue")).toBe(true);
    expect(reads.reduce((sum, c) => sum + (c.items ?? 0), 0)).toBe(due.length);
    expect(calls.filter((c) => c.command === "UpdateCommand")).toHaveLength(due.length);

    // Nothing left to do: the expired estimates left the list, so a rerun reads nothing at all.
    const rerun = recording(env.deps);
    expect((await expire(rerun.deps, at("2026-12-01T00:00:00.000Z"))).changed).toBe(0);
    expect(rerun.calls.reduce((sum, c) => sum + (c.items ?? 0), 0)).toBe(0);
  });

  it("answered, converted and deleted estimates leave the list; concurrent runs expire each once", async () => {
    const { env, user, clientId } = await world();
    const accepted = await sentEstimate(user, clientId, "2026-11-25");
    const declined = await sentEstimate(user, clientId, "2026-11-25");
    const converted = await sentEstimate(user, clientId, "2026-11-25");
    const deleted = await sentEstimate(user, clientId, "2026-11-25");
    await user.call("POST", `/estimates/${accepted}/accept`);
    await user.call("POST", `/estimates/${declined}/decline`);
    await user.call("POST", `/estimates/${converted}/convert`);
    expect((await user.call("DELETE", `/estimates/${deleted}`)).status).toBe(204);
    const waiting = [
      await sentEstimate(user, clientId, "2026-11-25"),
      await sentEstimate(user, clientId, "2026-11-25"),
    ];

    const runs = await Promise.all([1, 2, 3].map(() => expire(env.deps, at("2026-11-30T00:00:00.000Z"))));
    expect(runs.reduce((sum, r) => sum + r.changed, 0)).toBe(waiting.length);
    expect(await statusOf(user, accepted)).toBe("accepted");
    expect(await statusOf(user, declined)).toBe("declined");
    expect(await statusOf(user, converted)).toBe("converted");
    for (const id of waiting) expect(await statusOf(user, id)).toBe("expired");
    expectProblem(await user.call("GET", `/estimates/${deleted}`), 404, "not_found");
  });

  it("follows validUntil edits of a sent estimate: later, cleared, or earlier", async () => {
    const { env, user, clientId } = await world();
    const postponed = await sentEstimate(user, clientId, "2026-11-25");
    const cleared = await sentEstimate(user, clientId, "2026-11-25");
    const advanced = await sentEstimate(user, clientId, "2027-01-31");
    expect((await user.call("PATCH", `/estimates/${postponed}`, { validUntil: "2026-12-31" })).status).toBe(200);
    expect((await user.call("PATCH", `/estimates/${cleared}`, { validUntil: null })).status).toBe(200);
    expect((await user.call("PATCH", `/estimates/${advanced}`, { validUntil: "2026-11-24" })).status).toBe(200);

    expect((await expire(env.deps, at("2026-11-26T00:00:00.000Z"))).changed).toBe(1);
    expect(await statusOf(user, advanced)).toBe("expired");
    expect(await statusOf(user, postponed)).toBe("sent");
    expect(await statusOf(user, cleared)).toBe("sent");

    expect((await expire(env.deps, at("2027-12-31T00:00:00.000Z"))).changed).toBe(1);
    expect(await statusOf(user, postponed)).toBe("expired");
    expect(await statusOf(user, cleared)).toBe("sent");
  });

  it("an expired estimate can be deleted but not edited, answered or converted", async () => {
    const { env, user, clientId } = await world();
    const id = await sentEstimate(user, clientId, "2026-11-25");
    await expire(env.deps, at("2026-11-26T00:00:00.000Z"));
    expectProblem(
      await user.call("PATCH", `/estimates/${id}`, { validUntil: "2027-01-01" }),
      422,
      "estimate_not_editable",
    );
    for (const action of ["accept", "decline", "convert", "send"]) {
      expectProblem(await user.call("POST", `/estimates/${id}/${action}`), 422, "invalid_transition");
    }
    expect((await user.call("DELETE", `/estimates/${id}`)).status).toBe(204);
  });

  it("runs from the jobs command line's and the local ticker's runner by name", async () => {
    const { env, user, clientId } = await world();
    const id = await sentEstimate(user, clientId, "2026-11-25");
    const [result] = await runJobs(env.deps, ["expire-estimates"], at("2026-11-26T00:00:00.000Z"));
    expect(result).toMatchObject({ job: "expire-estimates", now: "2026-11-26T00:00:00.000Z", changed: 1 });
    expect(await statusOf(user, id)).toBe("expired");
  });
});
