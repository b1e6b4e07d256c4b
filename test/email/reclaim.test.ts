import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { afterEach, beforeAll, expect, it, vi } from "vitest";
import { CLAIM_TIMEOUT_MS, DELIVERY_INTERRUPTED, outboxKey } from "@invoicing/core/email/outbox";
import type { EmailTransport } from "@invoicing/core/capabilities/email-transport";
import { jobs } from "@invoicing/core/jobs/all";
import { createStreamReader } from "@invoicing/local/stream-reader";
import { createTestEnvWithClient, type TestEnv, type TestUser } from "../support/env";
import { WIDGET as line } from "../support/line-items";

/**
 * Issue 30 D: the stream subscriber is killed in the middle of an email (its Lambda hits its timeout
 * while SES is still answering). The claimed record must not stay `sending` forever: once the claim
 * has run out, the outbox sweep (the reminders job) reclaims it as `failed` with
 * "DeliveryInterrupted" — shown in GET /email-deliveries, counted in the EmailsFailed metric — and
 * never sends it again by itself (at most once; docs/operations.md).
 */
let env: TestEnv;
let alice: TestUser;
let clientId: number;

beforeAll(async () => {
  ({ env, user: alice, clientId } = await createTestEnvWithClient({ name: "Acme GmbH" }));
});
afterEach(() => vi.restoreAllMocks());

/** A transport that takes the message and never answers: the process dies before it does. */
function dyingTransport() {
  const calls: string[] = [];
  const transport: EmailTransport = {
    kind: "ses",
    deliver: (message) => {
      calls.push(message.id);
      return new Promise(() => {});
    },
  } as EmailTransport;
  return { transport, calls };
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; !condition(); i++) {
    if (i > 2000) throw new Error("condition never held");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

it("an email whose delivery was killed mid-send is reclaimed as failed after the claim timeout, never resent", async () => {
  const invoice = (await alice.call("POST", "/invoices", { clientId, lineItems: [line] })).body;
  expect((await alice.call("POST", `/invoices/${invoice.id}/finalize`)).status).toBe(200);
  expect((await alice.call("POST", `/invoices/${invoice.id}/send`)).status).toBe(200);

  // The subscriber that will die: it claims the email and hands it to SES, which never answers.
  const dying = dyingTransport();
  const doomed = createStreamReader(
    { ...env.deps, outbox: dying.transport },
    {
      endpoint: env.endpoint,
      tableName: env.tableName,
    },
  );
  void doomed.drain(); // never settles: the Lambda is gone
  await until(() => dying.calls.length === 1);
  const [id] = dying.calls;
  const stored = async () =>
    (
      await env.deps.db.doc.send(
        new GetCommand({ TableName: env.tableName, Key: outboxKey(alice.userId, id!), ConsistentRead: true }),
      )
    ).Item!;
  expect((await stored()).status).toBe("sending");

  // Another subscriber (the stream redelivers) and the sweep before the claim ran out: hands off.
  await env.drainStream();
  const early = await jobs.reminders(env.deps, new Date(env.clock.now.getTime() + CLAIM_TIMEOUT_MS - 60_000));
  expect(early).toMatchObject({ emailsDelivered: 0, emailsFailed: 0, emailsReclaimed: 0 });
  expect((await stored()).status).toBe("sending");
  const deliveries = async () =>
    (await alice.call("GET", "/email-deliveries")).body.find((d: { id: string }) => d.id === id);
  expect((await deliveries()).status).toBe("sending");

  // Past the claim: reclaimed as failed, once, and counted.
  const lines: string[] = [];
  vi.spyOn(console, "log").mockImplementation((line: unknown) => void lines.push(String(line)));
  vi.spyOn(console, "warn").mockImplementation((line: unknown) => void lines.push(String(line)));
  env.clock.advance(CLAIM_TIMEOUT_MS + 1000);
  const late = await jobs.reminders(env.deps, env.clock.now);
  expect(late).toMatchObject({ emailsDelivered: 0, emailsReclaimed: 1 });
  const item = await stored();
  expect(item.status).toBe("failed");
  expect(item.lastError).toBe(DELIVERY_INTERRUPTED);
  expect(item.duePk).toBeUndefined(); // off the due list: nothing will pick it up again
  expect(await deliveries()).toMatchObject({ id, status: "failed", detail: "DeliveryInterrupted", sentAt: null });
  const metrics = lines.map((l) => JSON.parse(l)).filter((l) => l._aws);
  expect(metrics.map((m) => Object.keys(m).find((k) => k.startsWith("Emails")))).toEqual([
    "EmailsReclaimed",
    "EmailsFailed",
  ]);
  expect(metrics[1]).toMatchObject({
    _aws: { CloudWatchMetrics: [{ Namespace: "Invoicing", Dimensions: [["service", "stage"]] }] },
    EmailsFailed: 1,
    service: "invoicing",
  });

  // At most once: no transport was asked again, a later sweep changes nothing.
  const again = await jobs.reminders(env.deps, new Date(env.clock.now.getTime() + 3_600_000));
  expect(again).toMatchObject({ emailsDelivered: 0, emailsReclaimed: 0 });
  expect(dying.calls).toEqual([id]);
  expect((await stored()).status).toBe("failed");
});
