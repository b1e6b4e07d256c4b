import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { SQSEvent } from "aws-lambda";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { overdueWorker } from "@invoicing/core/invoices/overdue-job";
import { sqsWorker } from "@invoicing/functions/lambda/workers/sqs-worker";
import { withDeadline } from "@invoicing/core/db/deadline";
import { createDb } from "@invoicing/core/db/dynamodb";
import { isUnavailable } from "@invoicing/core/db/errors";
import { createEventBridgeBus } from "@invoicing/core/events/bus";
import type { Event } from "@invoicing/core/events/resource";
import { DEADLINE_MARGIN_MS, withInvocationDeadline } from "@invoicing/functions/lambda/deadline";

/**
 * Issue 39 item 8: one deadline per invocation that every DynamoDB call respects, and timeouts on the
 * EventBridge client. The far end is a black hole: a local server that takes each request and never
 * answers (a lost response, a hung connection). Each call here is given a per-attempt timeout far
 * longer than the suite's, so only the deadline can end it: without it the test would not finish.
 */
let server: Server;
let url: string;
const sockets = new Set<Socket>();

beforeAll(async () => {
  server = createServer(() => {
    // Read the request, answer nothing.
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const hungDb = () =>
  createDb({ tableName: "t", dynamoEndpoint: url, region: "local" }, { requestTimeoutMs: 600_000, maxAttempts: 4 });
const read = (db: ReturnType<typeof hungDb>) =>
  db.doc.send(new GetCommand({ TableName: db.table, Key: { pk: "p", sk: "s" } }));

it("a DynamoDB call in flight stops at the invocation's deadline, as 'unavailable' (a 503, a retried record)", async () => {
  const db = hungDb();
  const error = await withDeadline(Date.now() + 200, () => read(db)).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(Error);
  expect((error as Error).name).toBe("AbortError");
  expect(isUnavailable(error)).toBe(true);
});

it("the deadline is the Lambda's remaining time less a margin: an invocation with less left stops its calls at once", async () => {
  const db = hungDb();
  let reached = false;
  const handler = withInvocationDeadline(async (_event: unknown, _context: { getRemainingTimeInMillis(): number }) => {
    reached = true;
    return read(db);
  });
  const error = await handler({}, { getRemainingTimeInMillis: () => DEADLINE_MARGIN_MS - 1 }).catch((e: unknown) => e);
  expect(reached).toBe(true);
  expect((error as Error).name).toBe("AbortError");
  // Outside an invocation (npm start, tests) there is no deadline: the signal is not passed at all.
  const free = await withDeadline(undefined, async () => "no deadline");
  expect(free).toBe("no deadline");
});

it("the EventBridge client gives up on a hung PutEvents by its own timeouts", async () => {
  const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
  process.env.AWS_ACCESS_KEY_ID = "local";
  process.env.AWS_SECRET_ACCESS_KEY = "local";
  try {
    const bus = createEventBridgeBus("invoicing-test-bus", "us-east-1", url);
    const event: Event = {
      id: "evt_1",
      type: "client.created",
      createdAt: "2026-11-27T12:00:00.000Z",
      resourceType: "client",
      resourceId: 1,
      data: { id: 1 },
    } as Event;
    const error = await bus.publish([event]).catch((e: unknown) => e);
    expect((error as Error).name).toBe("TimeoutError");
  } finally {
    if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
    else process.env.AWS_ACCESS_KEY_ID = saved.id;
    if (saved.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
    else process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
  }
});

/**
 * The work queues' workers too (issue 37 added them after issue 39's deadline): against a table that
 * never answers, a worker's read must stop at the invocation's deadline (AbortError, the message
 * given back to the queue), not run through the SDK's own attempts (4 × 10 s locally, 4 × 3 s
 * deployed) past the Lambda's end. Nothing here is timed: the error's name tells which of the two
 * ended the read.
 */
it("a queue worker's table read stops at the invocation's deadline, and its message comes again", async () => {
  // The worker builds its dependencies from the environment when it is made, as at a Lambda's init.
  const saved = { endpoint: process.env.DYNAMODB_ENDPOINT, table: process.env.TABLE_NAME };
  process.env.DYNAMODB_ENDPOINT = url;
  process.env.TABLE_NAME = "worker-deadline";
  const handler = sqsWorker("overdue", overdueWorker);
  for (const [name, value] of [
    ["DYNAMODB_ENDPOINT", saved.endpoint],
    ["TABLE_NAME", saved.table],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }

  const warnings: string[] = [];
  const warn = vi.spyOn(console, "warn").mockImplementation((line: unknown) => void warnings.push(String(line)));
  try {
    const message = { queue: "overdue", now: new Date().toISOString(), userId: "u1", keys: [] as unknown[] };
    message.keys.push({ pk: "USER#u1", sk: "INVOICE#0000000001" });
    const event = { Records: [{ messageId: "m-1", body: JSON.stringify(message) }] } as unknown as SQSEvent;
    // 16 s left: past the worker's 15 s finish margin, so it takes the record and reads it.
    const result = await handler(event, {
      awsRequestId: "r-1",
      getRemainingTimeInMillis: () => 16_000,
    } as never);
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: "m-1" }]);
    const failed = warnings.map((line) => JSON.parse(line) as { message: string; error?: string });
    expect(failed.find((line) => line.message.includes("a message failed"))?.error).toBe("AbortError");
  } finally {
    warn.mockRestore();
  }
});
