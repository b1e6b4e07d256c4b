import { describe, expect, it } from "vitest";
import type { Deps } from "@invoicing/core/deps";
import type { WorkMessage, Worker } from "@invoicing/core/queue/port";
import { SimulatedSqs } from "../../bench/scale/simulated-sqs";

/**
 * The scale simulation's queue (bench/scale/simulated-sqs.ts) runs the month start of a population
 * spread over two tables. What its figures rest on: the batches reach the workers in the order ONE
 * dispatcher would send them (users in turns across both tables), whatever order the tables'
 * dispatchers finished in, and each message is worked with its own table's dependencies.
 */
const message = (userId: string, n: number): WorkMessage => ({
  queue: "recurring",
  now: "2026-12-01T06:00:00.000Z",
  userId,
  keys: [{ pk: `USER#${userId}`, sk: `SCHEDULE#${n}` }],
});

function recordingWorker() {
  const calls: { table: string; users: string[] }[] = [];
  const worker: Worker = async (deps, messages) => {
    calls.push({ table: deps.db.table, users: messages.map((m) => m.userId) });
    return { tally: { handled: messages.length }, retry: [] };
  };
  return { calls, worker };
}

const tableDeps = (table: string) => ({ db: { table } }) as unknown as Deps;

describe("the simulated queue of the scale simulation", () => {
  it("sends two tables' messages in one dispatcher's turns, each worked with its own table", async () => {
    const { calls, worker } = recordingWorker();
    const sqs = new SimulatedSqs({ recurring: worker }, () => 1);
    const large = sqs.attach(tableDeps("large"));
    const small = sqs.attach(tableDeps("small"));

    sqs.hold();
    // The large users' table finishes dispatching first: 12 items of L1 and L2 in their own turns.
    const largeItems = Array.from({ length: 12 }, (_, i) => message(i % 2 ? "L2" : "L1", i));
    await large.workQueue!.send("recurring", largeItems);
    const smallItems = Array.from({ length: 12 }, (_, i) => message(`s${i}`, i));
    await small.workQueue!.send("recurring", smallItems);
    expect(calls).toEqual([]); // held: nothing worked before release
    sqs.release();
    await sqs.settled();

    // One dispatcher's turns: every user's first item (L1, L2 and the 12 small users) before any
    // user's second, in batches of 10; a batch's runs of one table are worked with that table.
    const worked = calls.flatMap((c) => c.users);
    expect(worked.slice(0, 14).sort()).toEqual(["L1", "L2", ...smallItems.map((m) => m.userId)].sort());
    expect(worked.slice(14).every((u) => u === "L1" || u === "L2")).toBe(true);
    expect(worked).toHaveLength(24);
    for (const call of calls) {
      for (const user of call.users) expect(call.table).toBe(user.startsWith("L") ? "large" : "small");
    }
    expect(sqs.outcomes.handled).toBe(24);
    expect(sqs.counts.delivered).toBe(24);
  });

  it("gives a message a worker gave back to the table it came from", async () => {
    const seen: { table: string; user: string }[] = [];
    let failOnce = true;
    const worker: Worker = async (deps, messages) => {
      for (const m of messages) seen.push({ table: deps.db.table, user: m.userId });
      if (failOnce && deps.db.table === "small") {
        failOnce = false;
        return { tally: {}, retry: [...messages] };
      }
      return { tally: {}, retry: [] };
    };
    const sqs = new SimulatedSqs({ recurring: worker }, () => 2);
    const small = sqs.attach(tableDeps("small"));
    await small.workQueue!.send("recurring", [message("s1", 1)]);
    await sqs.settled();
    expect(seen).toEqual([
      { table: "small", user: "s1" },
      { table: "small", user: "s1" },
    ]);
  });
});
