import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { attachMeter } from "../support/metering";
import { forgetRateLimits } from "@invoicing/core/limits/rate-limit";
import { forgetVerifiedKeys } from "@invoicing/core/keys/recent-keys";
import { line, newClient, newInvoice, ok } from "../invoices/fixtures";
import { createTestEnv, expectProblem, request, type TestEnv, type TestUser } from "../support/env";

/**
 * Per-user and per-public-token request limits (API.md section 16; core/src/limits/rate-limit.ts),
 * over HTTP on the real app and DynamoDB Local, with the limits on as deployed (API_RATE_LIMIT 5,
 * PUBLIC_RATE_LIMIT 3 here, bursts of twice that). Time is the test's clock, so every count is exact:
 * nothing here is timed.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
const LIMIT = 5;
const PUBLIC_LIMIT = 3;

let env: TestEnv;

beforeAll(async () => {
  env = await createTestEnv({ extraDeps: { rateLimits: { requestsPerSecond: LIMIT, publicPerSecond: PUBLIC_LIMIT } } });
});

beforeEach(() => {
  env.clock.advance(60_000); // every bucket full again
});

async function statuses(user: TestUser, count: number, path = "/clients"): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push((await user.call("GET", path)).status);
  return out;
}

function usersCli(...args: string[]) {
  return run(process.execPath, ["--import", "tsx", "packages/local/src/users-cli.ts", "limits", ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      DYNAMODB_ENDPOINT: env.endpoint,
      TABLE_NAME: env.tableName,
      DATA_DIR: mkdtempSync(join(tmpdir(), "invoicing-users-")),
      API_RATE_LIMIT: String(LIMIT),
    },
    timeout: 120_000,
  });
}

describe("per-user request limits", () => {
  it("a user past its limit gets 429 rate_limited with Retry-After, while another user's requests all succeed", async () => {
    const noisy = await env.user();
    const quiet = await env.user();
    const noisyStatuses: number[] = [];
    const quietStatuses: number[] = [];
    // The same instant: the noisy user sends 4× its burst, the quiet one a request between each.
    for (let i = 0; i < 4 * 2 * LIMIT; i++) {
      const res = await noisy.call("GET", "/clients");
      noisyStatuses.push(res.status);
      if (res.status === 429) {
        const problem = expectProblem(res, 429, "rate_limited");
        expect(problem.detail).toContain(`${LIMIT} requests per second`);
        expect(res.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);
      }
      if (i % 4 === 0) quietStatuses.push((await quiet.call("GET", "/clients")).status);
    }
    // The burst (twice the limit) went through, every request after it was refused.
    expect(noisyStatuses.filter((s) => s === 200)).toHaveLength(2 * LIMIT);
    expect(noisyStatuses.slice(2 * LIMIT).every((s) => s === 429)).toBe(true);
    expect(quietStatuses.every((s) => s === 200)).toBe(true);
    expect(quietStatuses.length).toBe(2 * LIMIT);

    // A second later, the limit's worth of places again.
    env.clock.advance(1000);
    expect((await statuses(noisy, LIMIT + 2)).filter((s) => s === 200)).toHaveLength(LIMIT);
  });

  it("a refused request does nothing", async () => {
    const user = await env.user();
    const { id: clientId } = await newClient(user); // 2 requests so far
    const invoice = await newInvoice(user, { clientId, lineItems: [line()] });
    await statuses(user, 2 * LIMIT); // uses up the rest of the burst and more
    const refused = await user.call("POST", `/invoices/${invoice.id}/finalize`);
    expectProblem(refused, 429, "rate_limited");
    const created = await user.call("POST", "/clients", { name: "Never" });
    expectProblem(created, 429, "rate_limited");
    env.clock.advance(10_000);
    expect(ok(await user.call("GET", `/invoices/${invoice.id}`)).body.status).toBe("draft");
    const names = ok(await user.call("GET", "/clients")).body.map((c: { name: string }) => c.name);
    expect(names).not.toContain("Never");
  });

  it("over any 10 s, a user faster than its limit gets at least limit × 10 and at most limit × 10 + burst, whichever container serves it", async () => {
    const user = await env.user();
    const admitted: number[] = []; // the clock time of each request let through
    const start = env.clock.now.getTime();
    // 4× the limit (one request every 50 ms) for 30 s; every other request from a "fresh container"
    // (one with no memory of the bucket): only the table's bucket holds the bound.
    for (let i = 0; i < 600; i++) {
      const t = i * 50;
      env.clock.set(new Date(start + t).toISOString());
      if (i % 2 === 0) forgetRateLimits();
      if ((await user.call("GET", "/clients")).status === 200) admitted.push(t);
    }
    for (let from = 0; from + 10_000 <= 30_000; from += 500) {
      const inWindow = admitted.filter((t) => t >= from && t < from + 10_000).length;
      expect(inWindow).toBeGreaterThanOrEqual(10 * LIMIT);
      expect(inWindow).toBeLessThanOrEqual(10 * LIMIT + 2 * LIMIT);
    }
  });

  it("a user's own limit (npm run users -- limits) takes effect on its next request; other users keep the default", async () => {
    const user = await env.user();
    const other = await env.user();
    expect(await statuses(user, 1)).toEqual([200]);
    const shown = await usersCli("--user", user.userId);
    expect(JSON.parse(shown.stdout)).toEqual({ userId: user.userId, requestsPerSecond: LIMIT, emailsPerDay: 200 });

    const set = await usersCli("--user", user.userId, "--requests-per-second", "20", "--emails-per-day", "7");
    expect(JSON.parse(set.stdout)).toEqual({ userId: user.userId, requestsPerSecond: 20, emailsPerDay: 7 });
    env.clock.advance(60_000);
    const own = await statuses(user, 45);
    expect(own.filter((s) => s === 200)).toHaveLength(40); // bursts of twice its own limit
    const others = await statuses(other, 15);
    expect(others.filter((s) => s === 200)).toHaveLength(2 * LIMIT);

    const lowered = await usersCli("--user", user.userId, "--requests-per-second", "1");
    expect(JSON.parse(lowered.stdout)).toMatchObject({ requestsPerSecond: 1, emailsPerDay: 7 });
    env.clock.advance(60_000);
    expect((await statuses(user, 4)).filter((s) => s === 200)).toHaveLength(2);
  });

  it("the command line refuses what is not a positive integer", async () => {
    await expect(usersCli("--user", "someone", "--requests-per-second", "0")).rejects.toMatchObject({ code: 2 });
    await expect(usersCli("--user", "bad user")).rejects.toMatchObject({ code: 2 });
  });
});

describe("what the limit costs", () => {
  it("a GET by id is still one round trip: the key and the record in one BatchGetItem, the bucket's update alongside (1 write unit)", async () => {
    const user = await env.user();
    const { id: clientId } = await newClient(user);
    env.clock.advance(60_000);
    const meter = attachMeter(env.deps.db.doc);
    try {
      ok(await user.call("GET", `/clients/${clientId}`));
      expect({ roundTrips: meter.roundTrips, commands: meter.byCommand, writeUnits: meter.writeUnits }).toEqual({
        roundTrips: 1,
        commands: { BatchGetItemCommand: 1, UpdateItemCommand: 1 },
        writeUnits: 1,
      });
      // Past the limit, refusals come from the container's memory: for a key it verified a moment
      // ago, with no request at all; in a container that has not seen the key, the key is checked
      // alone first (a forged key gets its 401), and nothing else is read or asked of the table.
      await statuses(user, 3 * LIMIT);
      meter.reset();
      expectProblem(await user.call("GET", `/clients/${clientId}`), 429, "rate_limited");
      expect({ commands: meter.byCommand, writeUnits: meter.writeUnits }).toEqual({ commands: {}, writeUnits: 0 });
      forgetVerifiedKeys();
      expectProblem(await user.call("GET", `/clients/${clientId}`), 429, "rate_limited");
      expect({ commands: meter.byCommand, writeUnits: meter.writeUnits }).toEqual({
        commands: { GetItemCommand: 1 },
        writeUnits: 0,
      });
      const forged = user.key.slice(0, -4) + (user.key.endsWith("AAAA") ? "BBBB" : "AAAA");
      expectProblem(
        await request(env.app, "GET", `/clients/${clientId}`, undefined, { Authorization: `Bearer ${forged}` }),
        401,
        "unauthorized",
      );
    } finally {
      meter.detach();
    }
  });
});

describe("a hot user's excess", () => {
  it("when a place frees, one request of the container asks the table for it, not every request then in flight", async () => {
    const user = await env.user();
    await statuses(user, 3 * LIMIT); // past the limit: the container knows until when
    env.clock.advance(1000 / LIMIT); // one place free again
    const meter = attachMeter(env.deps.db.doc);
    try {
      const answers = await Promise.all(Array.from({ length: 10 }, () => user.call("GET", "/clients")));
      expect(answers.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(429)]);
      // The one that asks: its key, its page and its place; the nine others read and ask nothing.
      expect(meter.byCommand).toEqual({ GetItemCommand: 1, QueryCommand: 1, UpdateItemCommand: 1 });
      // The place taken was the last: the next request is refused from memory, nothing asked.
      meter.reset();
      expectProblem(await user.call("GET", "/clients"), 429, "rate_limited");
      expect(meter.byCommand).toEqual({});
    } finally {
      meter.detach();
    }
  });
});

describe("per-public-token limits", () => {
  it("a hammered public link gets 429 while another user's link answers 200", async () => {
    const alice = await env.user();
    const bob = await env.user();
    const links: string[] = [];
    for (const user of [alice, bob]) {
      const { id: clientId } = await newClient(user);
      const invoice = await newInvoice(user, { clientId, lineItems: [line()] });
      links.push(ok(await user.call("POST", `/invoices/${invoice.id}/finalize`)).body.publicToken);
    }
    const hammered: number[] = [];
    const other: number[] = [];
    for (let i = 0; i < 6 * PUBLIC_LIMIT; i++) {
      const res = await request(env.app, "GET", `/public/invoices/${links[0]}`);
      hammered.push(res.status);
      if (res.status === 429) {
        expectProblem(res, 429, "rate_limited");
        expect(res.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);
      }
      if (i % 4 === 0) other.push((await request(env.app, "GET", `/public/invoices/${links[1]}`)).status);
    }
    expect(hammered.filter((s) => s === 200)).toHaveLength(2 * PUBLIC_LIMIT);
    expect(hammered.slice(2 * PUBLIC_LIMIT).every((s) => s === 429)).toBe(true);
    // Its PDF is the same link: refused too; the other link's page and PDF answer.
    expect((await request(env.app, "GET", `/public/invoices/${links[0]}/pdf`)).status).toBe(429);
    expect(other.every((s) => s === 200)).toBe(true);
    expect((await request(env.app, "GET", `/public/invoices/${links[1]}/pdf`)).status).toBe(200);
    // The link's owner is not limited by its customers' traffic.
    expect(await statuses(alice, 2)).toEqual([200, 200]);
  });
});
