import { describe, expect, it } from "vitest";
import { remindersDeadline } from "../src/invoices/reminders-job";

/**
 * The reminders job's dispatch leaves the outbox sweep of the same run its own share of time, so a
 * backlog of reminders cannot starve SES retries and reclaims (issue 37).
 */
describe("the reminders dispatch's deadline", () => {
  const now = 1_000_000;

  it("is the run's deadline when the run has none (a local run)", () => {
    expect(remindersDeadline(undefined, now)).toBeUndefined();
  });

  it("leaves the sweep a minute of a 5-minute run", () => {
    expect(remindersDeadline(now + 300_000, now)).toBe(now + 240_000);
  });

  it("leaves the sweep a quarter of a shorter run", () => {
    expect(remindersDeadline(now + 100_000, now)).toBe(now + 75_000);
  });

  it("is the deadline itself once it has passed", () => {
    expect(remindersDeadline(now - 1, now)).toBe(now - 1);
  });
});
