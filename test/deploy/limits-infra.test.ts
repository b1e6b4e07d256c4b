import { describe, expect, it } from "vitest";
import { evaluateInfra, functionsOf } from "../../scripts/infra.mjs";

/**
 * Issue 38: every deployed function gets the stage's limits (the same variables `npm start` reads),
 * and in production each has reserved concurrency of its own, sized in infra/limits.ts, that leaves
 * at least 400 of the default 1,000 unreserved for functions not listed (AWS requires 100).
 */
type Fn = { id: string; environment?: Record<string, string>; concurrency?: { reserved?: number } };

describe("limits in infra", () => {
  it("production: reserved concurrency for every function, the stage's limits in each one's environment", async () => {
    const infra = await evaluateInfra({ stage: "production", env: { EMAIL_SENDER: "billing@example.com" } });
    const functions = functionsOf(infra) as Fn[];
    expect(functions.length).toBeGreaterThanOrEqual(9);
    let reserved = 0;
    for (const fn of functions) {
      expect(fn.environment, fn.id).toMatchObject({
        API_RATE_LIMIT: "50",
        PUBLIC_RATE_LIMIT: "10",
        EMAIL_DAILY_QUOTA: "200",
      });
      // The queue workers (issue 37) reserve none: their event source mappings bound their
      // concurrency (infra/limits.ts). Every other function reserves its own.
      if (fn.id.endsWith("QueueSubscriber")) {
        expect(fn.concurrency?.reserved, fn.id).toBeUndefined();
        continue;
      }
      expect(fn.concurrency?.reserved, fn.id).toBeGreaterThan(0);
      reserved += fn.concurrency!.reserved!;
    }
    expect(functions.find((fn) => fn.id.startsWith("Api"))?.concurrency?.reserved).toBe(300);
    expect(reserved).toBeLessThanOrEqual(1000 - 400); // room left for functions without a reservation
  });

  it("other stages reserve nothing (they often share an account with production) but get the limits", async () => {
    const infra = await evaluateInfra({ stage: "dev", env: { EMAIL_SENDER: "billing@example.com" } });
    for (const fn of functionsOf(infra) as Fn[]) {
      expect(fn.concurrency?.reserved, fn.id).toBeUndefined();
      expect(fn.environment?.API_RATE_LIMIT, fn.id).toBe("50");
    }
  });
});
