import { BatchWriteCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Deps } from "@invoicing/core/deps";
import { dueKeys, userPk } from "@invoicing/core/db/keys";
import { dispatchDue, markAfter } from "@invoicing/core/queue/dispatch";
import { emptyResult, type QueueName, type WorkMessage } from "@invoicing/core/queue/port";
import { createSqsWorkQueue } from "@invoicing/core/queue/sqs";
import { createTestEnv, type TestEnv } from "../support/env";
import { type FakeSqs, startFakeSqs } from "../support/fake-sqs";

/**
 * A dispatcher whose queue is behind (a month start its workers drain for hours) must not send the
 * backlog again every run, nor read its keys again: it reads only what came due since its last run,
 * and reads everything again once the queue is empty (what the workers left due goes out then).
 * Real DynamoDB Local and the real dispatcher; the queue is the deployed port, recording what it is
 * sent and answering the backlog it is told.
 */
let env: TestEnv;
let sqs: FakeSqs;
beforeAll(async () => {
  env = await createTestEnv();
  sqs = await startFakeSqs();
});
afterAll(() => sqs.close());

/** Bare due-list entries of `userId` on the overdue list (the dispatcher reads only keys). */
async function putDue(userId: string, entries: { id: number; at: string }[]): Promise<void> {
  const items = entries.map(({ id, at }) => {
    const sk = `BACKLOG#${String(id).padStart(10, "0")}`;
    return { pk: userPk(userId), sk, ...dueKeys("overdue", userId, sk, at) };
  });
  await env.deps.db.doc.send(
    new BatchWriteCommand({ RequestItems: { [env.tableName]: items.map((Item) => ({ PutRequest: { Item } })) } }),
  );
}

/** The deployed shape: a work queue that records what it is sent and says it holds `backlog` messages. */
function deployed(backlog: { messages: number }) {
  const sent: WorkMessage[] = [];
  const deps: Deps = {
    ...env.deps,
    workQueue: {
      send: async (_queue: QueueName, messages: readonly WorkMessage[]) => void sent.push(...messages),
      backlog: async () => backlog.messages,
    },
  };
  return { sent, deps };
}

const run = (deps: Deps, now: string, deadline?: number) =>
  dispatchDue(deps, { job: "overdue", queue: "overdue", now, worker: async () => emptyResult(), deadline });

const idsOf = (sent: WorkMessage[], userId: string) =>
  sent.filter((m) => m.userId === userId).map((m) => Number(m.keys[0]!.sk.slice("BACKLOG#".length)));

describe("the dispatcher behind a backed-up queue", () => {
  it("sends only what came due since its last run while the queue holds messages, and all once it is empty", async () => {
    const userId = `backlog-${Date.now()}`;
    const queue = { messages: 0 };
    const { sent, deps } = deployed(queue);
    await putDue(userId, [
      { id: 1, at: "2021-01-01T00:00:01.000Z" },
      { id: 2, at: "2021-01-01T00:00:02.000Z" },
      { id: 3, at: "2021-01-01T00:00:03.000Z" },
    ]);

    const first = await run(deps, "2021-01-02T00:00:00.000Z");
    expect(idsOf(sent, userId)).toEqual([1, 2, 3]);
    expect(first.backlog).toBe(0);

    // The workers are behind: the three are still queued (and still due). Two more come due.
    await putDue(userId, [
      { id: 4, at: "2021-01-03T00:00:00.000Z" },
      { id: 5, at: "2021-01-03T12:00:00.000Z" },
    ]);
    queue.messages = 3;
    sent.length = 0;
    const behind = await run(deps, "2021-01-04T00:00:00.000Z");
    expect(idsOf(sent, userId)).toEqual([4, 5]);
    expect(behind.backlog).toBe(3);

    // Still behind, nothing new: nothing is sent again.
    queue.messages = 5;
    sent.length = 0;
    await run(deps, "2021-01-05T00:00:00.000Z");
    expect(idsOf(sent, userId)).toEqual([]);

    // The queue is empty and the five are still due (say the workers deferred them): all go again.
    queue.messages = 0;
    sent.length = 0;
    await run(deps, "2021-01-06T00:00:00.000Z");
    expect(idsOf(sent, userId).sort()).toEqual([1, 2, 3, 4, 5]);
  });

  it("a run stopped before sending leaves its mark before what it did not send", async () => {
    const userId = `stopped-${Date.now()}`;
    const queue = { messages: 0 };
    const { sent, deps } = deployed(queue);
    // An earlier run got through everything due by 2022-01-01.
    await run(deps, "2022-01-01T00:00:00.000Z");
    await putDue(userId, [
      { id: 1, at: "2022-01-02T00:00:00.000Z" },
      { id: 2, at: "2022-01-02T00:00:01.000Z" },
    ]);
    // Behind, and out of time before reading anything (its deadline is already past).
    queue.messages = 7;
    sent.length = 0;
    const stopped = await run(deps, "2022-01-03T00:00:00.000Z", Date.now());
    expect(stopped.dispatched).toBe(0);
    expect(stopped.complete).toBe(false);
    // Still behind: the next run must not skip the two the stopped run never sent.
    await run(deps, "2022-01-04T00:00:00.000Z");
    expect(idsOf(sent, userId)).toEqual([1, 2]);
  });

  it("the mark stands before the first entry left unread or unsent, else past what is due", () => {
    const entry = (order: string) => ({ userId: "u", key: { pk: "USER#u", sk: "X" }, order });
    const now = "2023-01-01T00:00:00.000Z";
    expect(markAfter("overdue", now, { entries: [], complete: true }, [])).toBe(now);
    expect(markAfter("reminders", now, { entries: [], complete: true }, [])).toBe(`${now}$`);
    const read = { entries: [], complete: false, firstUnread: "2022-12-31T00:00:00.000Z#u#B" };
    expect(markAfter("overdue", now, read, [])).toBe("2022-12-31T00:00:00.000Z#u#B");
    expect(markAfter("overdue", now, read, [entry("2022-12-30T00:00:00.000Z#u#A")])).toBe(
      "2022-12-30T00:00:00.000Z#u#A",
    );
  });
});

describe("the SQS work queue's backlog", () => {
  it("is the queue's messages as SQS counts them (GetQueueAttributes), against a server speaking SQS's protocol", async () => {
    for (const [name, value] of Object.entries({ AWS_ACCESS_KEY_ID: "test", AWS_SECRET_ACCESS_KEY: "test" }))
      process.env[name] ??= value;
    const url = `${sqs.url}/123456789012/invoicing-test-OverdueQueueQueue`;
    const queue = createSqsWorkQueue({ overdue: url }, "eu-central-1");
    expect(await queue.backlog!("overdue")).toBe(0);
    const message = { queue: "overdue" as const, now: "2021-01-01T00:00:00.000Z", userId: "u", keys: [] };
    await queue.send("overdue", [message, message, message]);
    expect(await queue.backlog!("overdue")).toBe(3);
    sqs.messages[0]!.deleted = true;
    expect(await queue.backlog!("overdue")).toBe(2);
    await expect(queue.backlog!("recurring")).rejects.toThrow(/no queue recurring/);
  });
});
