import { beforeAll, describe, expect, it } from "vitest";
import { jobs } from "@invoicing/core/jobs/all";
import { setUserLimits } from "@invoicing/core/limits/user-limits";
import { newClient, newInvoice, ok } from "../invoices/fixtures";
import { createTestEnv, expectProblem, type TestEnv, type TestUser } from "../support/env";

/**
 * A user's own email quota (API.md section 16, `npm run users -- limits --emails-per-day N`): it
 * holds for that user's sends (429 email_quota_exceeded with Retry-After) and for the reminders job,
 * while other users keep the default (EMAIL_DAILY_QUOTA, 3 here) — lower or higher than it.
 */
let env: TestEnv;

beforeAll(async () => {
  env = await createTestEnv({ extraDeps: { emailDailyQuota: 3 } });
  env.clock.set("2026-11-22T09:30:00.000Z");
});

async function finalized(user: TestUser, clientId: number, body: Record<string, unknown> = {}) {
  const invoice = await newInvoice(user, { clientId, ...body });
  return ok(await user.call("POST", `/invoices/${invoice.id}/finalize`)).body as { id: number };
}

async function sends(user: TestUser, count: number): Promise<number[]> {
  const { id: clientId } = await newClient(user);
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const invoice = await finalized(user, clientId);
    const res = await user.call("POST", `/invoices/${invoice.id}/send`);
    if (res.status === 429) {
      expectProblem(res, 429, "email_quota_exceeded");
      expect(res.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);
    }
    out.push(res.status);
  }
  return out;
}

describe("a user's own email quota", () => {
  it("a lower one holds for that user, a higher one lets that user send more, others keep the default", async () => {
    const low = await env.user();
    const high = await env.user();
    const other = await env.user();
    await setUserLimits(env.deps, low.userId, { emailsPerDay: 1 });
    await setUserLimits(env.deps, high.userId, { emailsPerDay: 5 });
    expect(await sends(low, 3)).toEqual([200, 429, 429]);
    expect(await sends(high, 6)).toEqual([200, 200, 200, 200, 200, 429]);
    expect(await sends(other, 4)).toEqual([200, 200, 200, 429]);
  });

  it("set after emails were counted, it applies to them at once", async () => {
    const user = await env.user();
    expect(await sends(user, 2)).toEqual([200, 200]);
    await setUserLimits(env.deps, user.userId, { emailsPerDay: 2 });
    expect(await sends(user, 1)).toEqual([429]);
    await setUserLimits(env.deps, user.userId, { emailsPerDay: 4 });
    expect(await sends(user, 3)).toEqual([200, 200, 429]);
  });

  it("the reminders job keeps to it: a reminder past the user's own quota waits", async () => {
    env.clock.set("2026-11-22T09:30:00.000Z");
    const user = await env.user();
    await setUserLimits(env.deps, user.userId, { emailsPerDay: 1 });
    const { id: clientId } = await newClient(user);
    const reminded = await finalized(user, clientId, { dueDate: "2026-11-23" });
    ok(await user.call("POST", `/invoices/${reminded.id}/send`)); // the one email of the day
    env.clock.set("2026-11-23T00:05:00.000Z");
    await jobs.reminders!(env.deps, env.clock.now);
    const reminders = ok(await user.call("GET", `/invoices/${reminded.id}/reminders`)).body as {
      sentAt: string | null;
    }[];
    expect(reminders.every((r) => r.sentAt === null)).toBe(true);
    env.clock.set("2026-11-23T09:31:00.000Z"); // the send left the window
    await jobs.reminders!(env.deps, env.clock.now);
    const after = ok(await user.call("GET", `/invoices/${reminded.id}/reminders`)).body as { sentAt: string | null }[];
    expect(after.filter((r) => r.sentAt !== null)).toHaveLength(1);
  });
});
