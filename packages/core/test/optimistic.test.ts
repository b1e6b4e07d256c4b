import { describe, expect, it } from "vitest";
import { anotherRound, MAX_ROUNDS, optimistic, Raced } from "../src/db/optimistic";
import { DomainError } from "../src/errors";

/** The one optimistic retry loop (db/optimistic.ts): what a lost race leads to, and when it stops. */

class Conflict extends Error {}

async function failure(run: Promise<unknown>): Promise<DomainError> {
  const error = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DomainError);
  return error as DomainError;
}

describe("optimistic()", () => {
  it("runs the round again on a fresh read after a lost race, numbering the rounds from 1", async () => {
    const seen: number[] = [];
    const result = await optimistic("record", async (round) => {
      seen.push(round);
      if (round < 3) throw new Raced();
      return "written";
    });
    expect(result).toBe("written");
    expect(seen).toEqual([1, 2, 3]);
  });

  it("gives up after MAX_ROUNDS lost races with a 503 service_unavailable naming the record", async () => {
    let rounds = 0;
    const error = await failure(
      optimistic("invoice", async () => {
        rounds++;
        throw new Raced();
      }),
    );
    expect(error.code).toBe("service_unavailable");
    expect(error.message).toContain("invoice");
    expect(rounds).toBe(MAX_ROUNDS);
  });

  it("with If-Match a lost race is a 412 precondition_failed at once, never a retry", async () => {
    let rounds = 0;
    const error = await failure(
      optimistic(
        "profile",
        async () => {
          rounds++;
          throw new Raced();
        },
        { ifMatch: '"3"' },
      ),
    );
    expect(error.code).toBe("precondition_failed");
    expect(rounds).toBe(1);
  });

  it("counts the caller's other race signals (alsoRaced) as lost races, and only those", async () => {
    let rounds = 0;
    const result = await optimistic(
      "estimate",
      async () => {
        if (++rounds === 1) throw new Conflict();
        return rounds;
      },
      { alsoRaced: (error) => error instanceof Conflict },
    );
    expect(result).toBe(2);
  });

  it.each([
    ["an error that is not a race", new Error("no table")],
    ["a refusal decided in the round (invalid_transition)", new DomainError("invalid_transition", "paid")],
  ])("passes %s through untouched after one round", async (_, thrown) => {
    let rounds = 0;
    const run = optimistic(
      "invoice",
      async () => {
        rounds++;
        throw thrown;
      },
      { alsoRaced: (error) => error instanceof Conflict },
    );
    await expect(run).rejects.toBe(thrown);
    expect(rounds).toBe(1);
  });

  it("counts commit()'s own resends (anotherRound) as rounds of the same loop: MAX_ROUNDS sends in all", async () => {
    // Each round sends its transaction, and resends it while anotherRound() allows (as commit() does
    // after a lost response), then loses: the change's sends never exceed the one limit.
    let sends = 0;
    const error = await failure(
      optimistic("invoice", async () => {
        sends++;
        while (await anotherRound()) sends++;
        throw new Raced();
      }),
    );
    expect(error.code).toBe("service_unavailable");
    expect(sends).toBe(MAX_ROUNDS);
  });

  it("gives no extra round outside a loop", async () => {
    expect(await anotherRound()).toBe(false);
  });
});
