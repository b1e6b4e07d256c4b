import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, expect, it } from "vitest";
import { commit } from "@invoicing/core/db/commit";
import { outboxKey, queueEmail } from "@invoicing/core/email/outbox";
import type { EmailTransport } from "@invoicing/core/capabilities/email-transport";
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

/** An invoice sent while SES refuses every message: five attempts, then `failed`. */
async function failedInvoiceEmail(user: TestUser): Promise<Delivery> {
  const refusing: EmailTransport = {
    kind: "ses",
    deliver: async () => {
      throw Object.assign(new Error("refused"), { name: "MessageRejected" });
    },
  } as EmailTransport;
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
