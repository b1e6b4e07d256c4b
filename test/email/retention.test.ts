import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import type { EmailMessage, EmailTransport } from "@invoicing/core/capabilities/email-transport";
import { commit } from "@invoicing/core/db/commit";
import { KEEP_RECIPIENT_SECONDS, recordFeedback, recipientKey } from "@invoicing/core/email/bounces";
import {
  CLAIM_TIMEOUT_MS,
  deliverQueued,
  KEEP_FAILED_SECONDS,
  outboxKey,
  queueEmail,
  sweepOutbox,
  type OutboxItem,
} from "@invoicing/core/email/outbox";
import { KEEP_CHECKOUT_MARKER_SECONDS, handleCardProcessorEvent } from "@invoicing/core/payments/card-payments";
import { checkoutPaymentKey } from "@invoicing/core/payments/model";
import { reconcile, TOMBSTONE_SECONDS } from "@invoicing/core/reports/aggregates";
import { createTestEnvWithClient, type TestEnv, type TestUser } from "../support/env";
import { WIDGET as line } from "../support/line-items";

/**
 * What is kept, and for how long (docs/data-model.md): the records whose use ends carry the table's
 * TTL attribute `expiresAt` (epoch seconds) as they are written — read back here from DynamoDB
 * Local. DynamoDB deletes late (up to days), and no reader relies on the deletion; these tests check
 * that each record is written with its end, which is what makes it go at all.
 */
let env: TestEnv;
let alice: TestUser;
let clientId: number;
const epoch = () => Math.floor(env.clock.now.getTime() / 1000);

beforeAll(async () => {
  ({ env, user: alice, clientId } = await createTestEnvWithClient({ name: "Keep GmbH" }));
});

async function stored(key: { pk: string; sk: string }): Promise<Record<string, any> | undefined> {
  const out = await env.deps.db.doc.send(new GetCommand({ TableName: env.tableName, Key: key, ConsistentRead: true }));
  return out.Item;
}

/** A transport that refuses every message, as SES refuses an unverified recipient in its sandbox. */
const refusing: EmailTransport = {
  kind: "ses",
  deliver: async (_message: EmailMessage) => {
    throw Object.assign(new Error("refused"), { name: "MessageRejected" });
  },
} as EmailTransport;

describe("records whose use ends carry a TTL", () => {
  it("a failed email: 90 days from when the outbox gave up on it", async () => {
    const queued = queueEmail({ ...env.deps, outbox: refusing }, alice.userId, {
      to: "a@b.test",
      subject: "X",
      text: "Y",
    });
    await commit(env.deps, [queued.write]);
    let item: OutboxItem = queued.item;
    for (let i = 0; i < 5; i++) {
      expect(await deliverQueued({ ...env.deps, outbox: refusing }, item)).toBe("failed");
      item = (await stored(outboxKey(alice.userId, item.id))) as OutboxItem;
      // Still retrying: no end yet (a pending email must never expire).
      if (i < 4) expect(item.expiresAt).toBeUndefined();
    }
    expect(item).toMatchObject({ status: "failed", lastError: "MessageRejected" });
    expect(item.expiresAt).toBe(epoch() + KEEP_FAILED_SECONDS);
  });

  it("an email reclaimed as failed (its deliverer died mid-send): 90 days too", async () => {
    const queued = queueEmail(env.deps, alice.userId, { to: "c@d.test", subject: "X", text: "Y" });
    // As a deliverer left it: claimed (`sending`) at the clock's time, its claim's end on the list.
    const claimedAt = env.clock.now.toISOString();
    await commit(env.deps, [queued.write]);
    const record = (await stored(outboxKey(alice.userId, queued.item.id)))!;
    await env.deps.db.doc.send(
      new PutCommand({ TableName: env.tableName, Item: { ...record, status: "sending", attempts: 1, claimedAt } }),
    );
    const later = new Date(env.clock.now.getTime() + CLAIM_TIMEOUT_MS + 60_000);
    await sweepOutbox({ ...env.deps, clock: () => later }, later.toISOString());
    const item = (await stored(outboxKey(alice.userId, queued.item.id)))!;
    expect(item).toMatchObject({ status: "failed", lastError: "DeliveryInterrupted" });
    expect(item.expiresAt).toBe(Math.floor(later.getTime() / 1000) + KEEP_FAILED_SECONDS);
  });

  it("a recipient's bounce mark: 90 days from its latest report, moved on by each report", async () => {
    const feedback = {
      problem: "bounced" as const,
      detail: "Permanent/NoEmail",
      at: env.clock.now.toISOString(),
      outboxId: "20261122T093000000Z-0123456789abcdef",
      userId: alice.userId,
      recipients: ["gone@client.test"],
    };
    await recordFeedback(env.deps, feedback);
    expect((await stored(recipientKey(alice.userId, "gone@client.test")))!.expiresAt).toBe(
      epoch() + KEEP_RECIPIENT_SECONDS,
    );
    const later = new Date(env.clock.now.getTime() + 10 * 86_400_000);
    await recordFeedback({ ...env.deps, clock: () => later }, { ...feedback, at: later.toISOString() });
    expect((await stored(recipientKey(alice.userId, "gone@client.test")))!.expiresAt).toBe(
      Math.floor(later.getTime() / 1000) + KEEP_RECIPIENT_SECONDS,
    );
  });

  it("a checkout session's paid-once marker: 60 days from its payment", async () => {
    const invoice = (await alice.call("POST", "/invoices", { clientId, lineItems: [line] })).body;
    expect((await alice.call("POST", `/invoices/${invoice.id}/finalize`)).status).toBe(200);
    expect((await alice.call("POST", `/invoices/${invoice.id}/send`)).status).toBe(200);
    const event = {
      kind: "checkout_paid" as const,
      eventId: "evt_keep_1",
      eventType: "checkout.session.completed",
      occurredAt: env.clock.now.toISOString(),
      sessionId: "cs_keep_1",
      paymentReference: "pi_keep_1",
      amountCents: 100n,
      currency: invoice.currency as string,
      userId: alice.userId,
      invoiceId: invoice.id as number,
    };
    expect(await handleCardProcessorEvent(env.deps, event)).toBe("applied");
    const marker = (await stored(checkoutPaymentKey(alice.userId, "cs_keep_1")))!;
    expect(marker.expiresAt).toBe(epoch() + KEEP_CHECKOUT_MARKER_SECONDS);
    // The marker still does its job: the same session's event again pays nothing.
    expect(await handleCardProcessorEvent(env.deps, { ...event, eventId: "evt_keep_2" })).toBe("duplicate");
  });

  it("a report ledger tombstone: 15 days, beyond the stream's 24 hours and the failure queue's 14 days", async () => {
    const sk = "PAYMENT#0000000001#0000000001";
    expect(await reconcile(env.deps, alice.userId, sk, { removed: true })).toBe("unchanged");
    const tombstone = (await stored({ pk: `USER#${alice.userId}`, sk: `REPORTED#${sk}` }))!;
    expect(tombstone).toMatchObject({ removed: true });
    expect(tombstone.expiresAt).toBe(epoch() + TOMBSTONE_SECONDS);
    expect(TOMBSTONE_SECONDS).toBeGreaterThan(14 * 86_400);
  });
});
