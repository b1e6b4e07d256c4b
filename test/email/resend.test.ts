import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { SESv2Client } from "@aws-sdk/client-sesv2";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, expect, it } from "vitest";
import { commit } from "@invoicing/core/db/commit";
import { outboxKey, queueEmail } from "@invoicing/core/email/outbox";
import { SesTransport } from "@invoicing/core/email/ses-transport";
import { createTestEnvWithClient, expectProblem, type TestEnv, type TestUser } from "../support/env";
import { WIDGET as line } from "../support/line-items";

/**
 * Issue 30, operator tool: POST /email-deliveries/{id}/resend sends a failed email again, as a new
 * email the stream subscriber delivers; only a failed one, once; another user's id is a 404.
 */
let env: TestEnv;
let alice: TestUser;
let clientId: number;

beforeAll(async () => {
  ({ env, user: alice, clientId } = await createTestEnvWithClient({ name: "Acme GmbH" }));
});

type Delivery = { id: string; to: string; subject: string; status: string; detail: string | null };
const deliveries = async (user: TestUser): Promise<Delivery[]> => (await user.call("GET", "/email-deliveries")).body;

/**
 * SES refusing every message, as SES API v2 answers a refused SendEmail (HTTP 400, the error's name
 * in `x-amzn-ErrorType`, a JSON `message`): a local server the real SES client sends to, so the
 * SDK's own error path decides what the outbox records.
 */
let sesRequests = 0;
const ses = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    sesRequests++;
    res.writeHead(400, {
      "Content-Type": "application/json",
      "x-amzn-ErrorType": "MessageRejected:http://internal.amazon.com/coral/com.amazonaws.sesv2/",
      "x-amzn-RequestId": "6f8a2c1e-0000-4000-8000-000000000000",
    });
    res.end(
      JSON.stringify({
        message: "Email address is not verified. The following identities failed the check in region EU-WEST-1: a@x",
      }),
    );
  });
});
await new Promise<void>((ok) => ses.listen(0, "127.0.0.1", ok));
afterAll(() => new Promise<void>((ok) => ses.close(() => ok())));
const refusing = new SesTransport(
  async () =>
    new SESv2Client({
      region: "eu-west-1",
      endpoint: `http://127.0.0.1:${(ses.address() as AddressInfo).port}`,
      credentials: { accessKeyId: "AKIDLOCALTEST", secretAccessKey: "local-test-secret" },
      maxAttempts: 2,
    }),
  { from: "billing@example.com" },
);

it("the real SES client's refusal: a MessageRejected error, not retried", async () => {
  const before = sesRequests;
  const refused = await refusing
    .deliver({ id: "m1", to: "a@x.example", subject: "s", text: "t", createdAt: "2026-11-22T09:30:00.000Z" })
    .then(
      () => expect.fail("SES refused it"),
      (error: unknown) => error as Error & { $metadata?: { httpStatusCode?: number } },
    );
  expect(refused.name).toBe("MessageRejected");
  expect(refused.message).toMatch(/not verified/);
  expect(refused.$metadata?.httpStatusCode).toBe(400);
  expect(sesRequests - before).toBe(1); // a refusal is final: the SDK does not retry it
});

/** An invoice sent while SES refuses every message: five attempts, then `failed`. */
async function failedInvoiceEmail(user: TestUser): Promise<Delivery> {
  const before = new Set((await deliveries(user)).map((d) => d.id));
  const invoice = (await user.call("POST", "/invoices", { clientId, lineItems: [line] })).body;
  expect((await user.call("POST", `/invoices/${invoice.id}/finalize`)).status).toBe(200);
  expect((await user.call("POST", `/invoices/${invoice.id}/send`)).status).toBe(200);
  // The test clock stands still, so ids share their time part: the new one is the one not seen before.
  const queued = (await deliveries(user)).find((d) => !before.has(d.id));
  const item = (
    await env.deps.db.doc.send(new GetCommand({ TableName: env.tableName, Key: outboxKey(user.userId, queued!.id) }))
  ).Item!;
  // Mark it failed as the outbox's last attempt would (core/src/email/outbox.ts release()).
  const { deliverQueued } = await import("@invoicing/core/email/outbox");
  let current = item;
  for (let attempt = 0; attempt < 5; attempt++) {
    await deliverQueued({ ...env.deps, outbox: refusing }, current as never);
    current = (
      await env.deps.db.doc.send(
        new GetCommand({ TableName: env.tableName, Key: outboxKey(user.userId, queued!.id), ConsistentRead: true }),
      )
    ).Item!;
  }
  expect(current.status).toBe("failed");
  return (await deliveries(user)).find((d) => d.id === queued!.id)!;
}

it("a failed email is queued again as a new email, delivered by the subscriber; the old one says so", async () => {
  const failed = await failedInvoiceEmail(alice);
  expect(failed).toMatchObject({ status: "failed", detail: "MessageRejected" });

  const res = await alice.call("POST", `/email-deliveries/${failed.id}/resend`);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ to: failed.to, subject: failed.subject, status: "pending", detail: null });
  expect(res.body.id).not.toBe(failed.id);

  await env.drainStream(); // the copy's INSERT: the subscriber delivers it (the local .eml transport)
  const after = await deliveries(alice);
  expect(after.find((d) => d.id === res.body.id)).toMatchObject({ status: "sent" });
  expect(after.find((d) => d.id === failed.id)).toMatchObject({ status: "failed" });
  const old = (
    await env.deps.db.doc.send(new GetCommand({ TableName: env.tableName, Key: outboxKey(alice.userId, failed.id) }))
  ).Item!;
  expect(old.resentAs).toBe(res.body.id);

  // Once: the same failed email again is refused, and nothing new is queued.
  const count = after.length;
  expectProblem(await alice.call("POST", `/email-deliveries/${failed.id}/resend`), 422, "invalid_transition");
  expect((await deliveries(alice)).length).toBe(count);
});

it("only a failed email: a sent one is 422; an unknown id, or another user's, 404", async () => {
  const queued = queueEmail(env.deps, alice.userId, { to: "x@acme.test", subject: "Hi", text: "Body" });
  await commit(env.deps, [queued.write]);
  await env.drainStream();
  expect((await deliveries(alice)).find((d) => d.id === queued.item.id)).toMatchObject({ status: "sent" });
  const refused = expectProblem(
    await alice.call("POST", `/email-deliveries/${queued.item.id}/resend`),
    422,
    "invalid_transition",
  );
  expect(refused.detail).toMatch(/only a failed one/);

  expectProblem(
    await alice.call("POST", "/email-deliveries/20261122T093000000Z-0123456789abcdef/resend"),
    404,
    "not_found",
  );
  expectProblem(await alice.call("POST", "/email-deliveries/nonsense/resend"), 404, "not_found");
  const bob = await env.user();
  const failed = await failedInvoiceEmail(alice);
  expectProblem(await bob.call("POST", `/email-deliveries/${failed.id}/resend`), 404, "not_found");
  expect((await deliveries(alice)).find((d) => d.id === failed.id)).toMatchObject({ status: "failed" });
});
