import { afterAll, beforeAll, expect, it } from "vitest";
import { createDb } from "@invoicing/core/db/dynamodb";
import { createStreamReader } from "@invoicing/local/stream-reader";
import { newClient, ok } from "../invoices/fixtures";
import { createTestEnv, type TestEnv } from "../support/env";
import { startFaultProxy, type FaultProxy } from "../support/fault-proxy";

/**
 * A stream batch that fails midway: the subscriber's writes go through the fault proxy, and the
 * write of one record's event keeps failing (DynamoDB answers 500, the SDK's retries run out). The
 * records before it are done; it and those after it are read again and handled on the next read,
 * so every change gives its event exactly once. Then a record whose write DynamoDB applied but whose
 * answer was lost: handled again, it makes no second event.
 */
let env: TestEnv;
let proxy: FaultProxy;

beforeAll(async () => {
  env = await createTestEnv();
  proxy = await startFaultProxy(env.endpoint);
});
afterAll(() => proxy.close());

const writesEvent = (type: string) => (operation: string, body: unknown) =>
  ["PutItem", "TransactWriteItems"].includes(operation) &&
  JSON.stringify(body).includes(`"${type}"`) &&
  JSON.stringify(body).includes("EVENT#");

it("a record that fails is retried from itself on: no event lost, none doubled", async () => {
  const user = await env.user();
  // The subscriber under test: its table writes through the proxy, its stream read direct.
  const deps = {
    ...env.deps,
    db: createDb(
      { tableName: env.tableName, dynamoEndpoint: proxy.url, region: "local" },
      // No fault here withholds an answer: a generous timeout, so a slow answer on a busy machine is
      // never a failure of its own (maxAttempts 2 keeps the injected errors quick to give up on).
      { maxAttempts: 2, requestTimeoutMs: 10_000 },
    ),
  };
  const reader = createStreamReader(deps, { endpoint: env.endpoint, tableName: env.tableName });
  try {
    const client = await newClient(user);
    const invoice = ok(
      await user.call("POST", "/invoices", { clientId: client.id, lineItems: [{ description: "x", unitPrice: "10" }] }),
      201,
    ).body;
    ok(await user.call("POST", `/invoices/${invoice.id}/finalize`));
    ok(await user.call("PATCH", `/clients/${client.id}`, { name: "Later" }));

    const failing = proxy.inject({ match: writesEvent("invoice.finalized"), fault: "server-error", times: Infinity });
    await reader.drain();
    expect(failing.hits).toBeGreaterThan(0);
    const types = async () =>
      (ok(await user.call("GET", "/events")).body as { type: string }[]).map((e) => e.type).reverse();
    // Stopped at the failing record: nothing after it was handled either (the stream's order holds).
    expect(await types()).toEqual(["client.created", "invoice.created"]);

    failing.remove();
    // The retried record's write is applied but its answer lost: the SDK resends, the write token
    // recognises its own write.
    proxy.inject({ match: writesEvent("invoice.finalized"), fault: "reset-after-write", times: 1 });
    await reader.drain();
    expect(await types()).toEqual(["client.created", "invoice.created", "invoice.finalized", "client.updated"]);

    // Everything fed once more from the stream's start: still once each.
    const again = createStreamReader(deps, { endpoint: env.endpoint, tableName: env.tableName });
    await again.drain();
    again.close();
    expect(await types()).toEqual(["client.created", "invoice.created", "invoice.finalized", "client.updated"]);
  } finally {
    reader.close();
  }
});
