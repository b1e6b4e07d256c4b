import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { BatchWriteCommand, GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dueKeys, userPk } from "@invoicing/core/db/keys";
import { dispatchDue } from "@invoicing/core/queue/dispatch";
import { BATCH_SIZE, emptyResult, type WorkMessage, type Worker } from "@invoicing/core/queue/port";
import { remindersWorker } from "@invoicing/core/invoices/reminders-job";
import { createStreamReader } from "@invoicing/local/stream-reader";
import { createTestEnv, type TestEnv, type TestUser } from "../support/env";
import { newClient, ok } from "../invoices/fixtures";
import { op } from "../support/fault-proxy";
import { createFaultyEnv } from "./harness";

/**
 * Issue 37, "Done when": background work taken in turns across users, a slow receiver that delays
 * only its own endpoint, and a worker that dies mid-item without losing or doubling it. Real parts
 * (DynamoDB Local, the real dispatcher, stream reader, subscriber and workers, a real HTTP receiver,
 * the fault proxy); assertions on order and state, never on time.
 */
let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv({ extraDeps: { webhookPolicy: { allowPrivate: true } } });
});

async function until(what: string, condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; !(await condition()); i++) {
    if (i > 3000) throw new Error(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("the dispatcher takes users in turns", () => {
  it("a user with 5,000 due items does not delay another user's first item beyond the first batch", async () => {
    const big = `big-${Date.now()}`;
    const quiet = [`quiet-a-${Date.now()}`, `quiet-b-${Date.now()}`];
    // 5,000 due entries of one user, all due before the quiet users' (the due list's own order would
    // hand all 5,000 out first), written straight to the table: the dispatcher reads only keys.
    // Bare due-list entries (no invoice behind them: the stream and the jobs' workers ignore the kind).
    const entry = (userId: string, id: number, at: string) => {
      const sk = `FANOUT#${String(id).padStart(10, "0")}`;
      return { pk: userPk(userId), sk, ...dueKeys("overdue", userId, sk, at) };
    };
    const items = Array.from({ length: 5_000 }, (_, i) =>
      entry(big, i + 1, new Date(Date.UTC(2020, 0, 1, 0, 0, i)).toISOString()),
    );
    items.push(entry(quiet[0]!, 1, "2020-06-01T00:00:00.000Z"), entry(quiet[1]!, 1, "2020-06-02T00:00:00.000Z"));
    for (let i = 0; i < items.length; i += 25) {
      const RequestItems = { [env.tableName]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) };
      await env.deps.db.doc.send(new BatchWriteCommand({ RequestItems }));
    }

    // The workers record the batches in the order they take them (the in-process queue: first in,
    // first out, as SQS hands a standard queue's messages out roughly in order).
    const taken: WorkMessage[][] = [];
    const recording: Worker = async (_deps, messages) => {
      taken.push([...messages]);
      return emptyResult();
    };
    const run = await dispatchDue(env.deps, {
      job: "overdue",
      queue: "overdue",
      now: "2021-01-01T00:00:00.000Z",
      worker: recording,
    });
    const ours = (m: WorkMessage) => m.userId === big || quiet.includes(m.userId);
    const batches = taken.map((batch) => batch.filter(ours)).filter((batch) => batch.length > 0);
    expect(batches.flat()).toHaveLength(5_002);
    expect(run.dispatched).toBeGreaterThanOrEqual(5_002);
    // Every batch is at most BATCH_SIZE, and each quiet user's only item is in the first batch.
    for (const batch of taken) expect(batch.length).toBeLessThanOrEqual(BATCH_SIZE);
    const batchOf = (userId: string) => batches.findIndex((batch) => batch.some((m) => m.userId === userId));
    expect(batchOf(quiet[0]!)).toBe(0);
    expect(batchOf(quiet[1]!)).toBe(0);
    // The big user's items still go in their due order.
    const bigIds = batches
      .flat()
      .filter((m) => m.userId === big)
      .map((m) => m.keys[0]!.sk);
    expect(bigIds).toEqual(items.slice(0, 5_000).map((i) => i.sk));
  });
});

describe("a slow 2xx receiver delays only its own endpoint", () => {
  let server: Server;
  let url: string;
  /** Requests by path; the slow one answers 200 after 2 s, and not before the test releases it. */
  const requests: { path: string; answeredAt?: number }[] = [];
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));

  beforeAll(async () => {
    server = createServer((req, res) => {
      const record: { path: string; answeredAt?: number } = { path: req.url ?? "" };
      requests.push(record);
      req.resume();
      const answer = () => {
        record.answeredAt = Date.now();
        res.writeHead(200).end();
      };
      if (req.url === "/slow") {
        const twoSeconds = new Promise((resolve) => setTimeout(resolve, 2_000));
        void Promise.all([twoSeconds, released]).then(answer);
      } else answer();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    release();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const endpoint = async (user: TestUser, path: string) =>
    ok(await user.call("POST", "/webhook-endpoints", { url: `${url}${path}`, events: ["client.created"] }), 201);
  const eventsOf = async (user: TestUser) => (await user.call("GET", "/events")).body as { type: string }[];

  it("another user's event is stored, and its webhook delivered, while the slow attempt is still waiting", async () => {
    const slowUser = await env.user();
    const quietUser = await env.user();
    await endpoint(slowUser, "/slow");
    await endpoint(quietUser, "/quiet");
    // The stream as `npm start` reads it: polling, the subscriber on each batch.
    const reader = createStreamReader(env.deps, { endpoint: env.endpoint, tableName: env.tableName });
    await reader.drain(); // the endpoints' own records, out of the way
    const stop = reader.start(50);
    try {
      await newClient(slowUser);
      await until("the slow receiver got its webhook", () => requests.some((r) => r.path === "/slow"));
      // Only now does the other user change something: a later batch than the slow user's.
      await newClient(quietUser);
      await until("the quiet user's event is stored", async () =>
        (await eventsOf(quietUser)).some((e) => e.type === "client.created"),
      );
      await until("the quiet receiver got its webhook", () => requests.some((r) => r.path === "/quiet"));
      // Structural: all of it happened while the slow attempt was still open. Before issue 37 the
      // subscriber waited for every first attempt of a batch, so the quiet user's batch waited for it.
      const slow = requests.find((r) => r.path === "/slow")!;
      expect(slow.answeredAt).toBeUndefined();
      // And the sender is still waiting on it: its attempt is in flight (pending), not timed out or done.
      const [slowEndpoint] = (await slowUser.call("GET", "/webhook-endpoints")).body as { id: number }[];
      const inFlight = (await slowUser.call("GET", `/webhook-endpoints/${slowEndpoint!.id}/deliveries`)).body;
      expect(inFlight.map((d: { status: string }) => d.status)).toEqual(["pending"]);
      release();
      await until("the slow receiver answered", () => slow.answeredAt !== undefined);
    } finally {
      await stop();
      await reader.drain();
      reader.close();
    }
    // And the slow delivery succeeded (a 2xx, within the 10 s timeout): recorded, not retried.
    const endpoints = (await slowUser.call("GET", "/webhook-endpoints")).body as { id: number }[];
    const deliveries = (await slowUser.call("GET", `/webhook-endpoints/${endpoints[0]!.id}/deliveries`)).body;
    expect(deliveries.map((d: { status: string }) => d.status)).toEqual(["succeeded"]);
  });
});

describe("a worker killed mid-item", () => {
  it("never loses or doubles it: the write it could not confirm is found done when the message comes again", async () => {
    const faulty = await createFaultyEnv({ now: "2026-11-01T09:00:00.000Z", silenceWarnings: true });
    try {
      const user = await faulty.env.user();
      const clientId = (await user.call("POST", "/clients", { name: "Wayne", email: "ap@wayne.test" })).body.id;
      const invoice = ok(
        await user.call("POST", "/invoices", {
          clientId,
          dueDate: "2026-11-20T00:00:00.000Z",
          lineItems: [{ description: "Cape", unitPrice: "10.00" }],
        }),
        201,
      ).body;
      ok(await user.call("POST", `/invoices/${invoice.id}/finalize`), 200);
      ok(await user.call("POST", `/invoices/${invoice.id}/send`), 200);
      const reminders = async () =>
        (
          await faulty.env.deps.db.doc.send(
            new QueryCommand({
              TableName: faulty.env.tableName,
              KeyConditionExpression: "pk = :p AND begins_with(sk, :s)",
              ExpressionAttributeValues: { ":p": userPk(user.userId), ":s": "REMINDER#" },
              ConsistentRead: true,
            }),
          )
        ).Items!;
      const first = (await reminders())[0]!;
      const now = String(first.scheduledAt);
      const message: WorkMessage = {
        queue: "reminders",
        now,
        userId: user.userId,
        keys: [{ pk: String(first.pk), sk: String(first.sk) }],
      };
      const deps = { ...faulty.env.deps, db: faulty.db };

      // 1. Killed before its write reached the table: the table answers nothing (every try).
      const down = faulty.proxy.inject({
        match: op("TransactWriteItems", "REMINDER#"),
        fault: "server-error",
        times: Infinity,
      });
      const beforeWrite = await remindersWorker(deps, [message]);
      down.remove();
      expect(beforeWrite.retry).toEqual([message]); // given back: SQS hands it out again
      expect((await reminders())[0]).toMatchObject({ status: "scheduled" }); // not lost: still due

      // 2. Killed after its write was applied, before it heard so: every answer cut off.
      const cut = faulty.proxy.inject({
        match: op("TransactWriteItems", "REMINDER#"),
        fault: "reset-after-write",
        times: Infinity,
      });
      const afterWrite = await remindersWorker(deps, [message]);
      cut.remove();
      expect(cut.hits).toBeGreaterThan(0);
      expect(afterWrite.retry).toEqual([message]);

      // The message comes again (twice, as SQS may): the reminder is found sent, nothing is redone.
      const again = await remindersWorker(deps, [message, message]);
      expect(again.retry).toEqual([]);
      expect(again.tally).toEqual({ skipped: 2 });
      const stored = (await reminders())[0]!;
      expect(stored).toMatchObject({ status: "sent" });
      expect(stored.duePk).toBeUndefined();
      // Exactly one email for it: the invoice's own and this reminder's.
      const outbox = await faulty.env.deps.db.doc.send(
        new QueryCommand({
          TableName: faulty.env.tableName,
          KeyConditionExpression: "pk = :p AND begins_with(sk, :s)",
          ExpressionAttributeValues: { ":p": userPk(user.userId), ":s": "OUTBOX#" },
          ConsistentRead: true,
        }),
      );
      expect(outbox.Items).toHaveLength(2);
      const email = await faulty.env.deps.db.doc.send(
        new GetCommand({
          TableName: faulty.env.tableName,
          Key: { pk: userPk(user.userId), sk: `OUTBOX#${stored.outboxId}` },
        }),
      );
      expect(email.Item?.subject).toMatch(/reminder/i);
    } finally {
      await faulty.close();
    }
  });
});
