import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { SQSEvent } from "aws-lambda";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { overdueWorker } from "@invoicing/core/invoices/overdue-job";
import { sqsWorker } from "@invoicing/functions/lambda/workers/sqs-worker";

/**
 * docs/reliability.md "Deadlines": every Lambda entry point runs its work under the invocation's
 * deadline, which every DynamoDB call respects — the work queues' workers too (issue 37 added them
 * after issue 39's deadline). Against a table that never answers, a worker's read must stop at the
 * invocation's deadline (AbortError, the message given back to the queue), not run through the SDK's
 * own attempts (4 × 10 s locally, 4 × 3 s deployed) past the Lambda's end. Nothing here is timed: the
 * error's name tells which of the two ended the read.
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
