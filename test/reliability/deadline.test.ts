import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, expect, it } from "vitest";
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
