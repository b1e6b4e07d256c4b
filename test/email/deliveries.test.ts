import { beforeAll, expect, it } from "vitest";
import { feedbackTags, parseSesEvent, recordFeedback } from "@invoicing/core/email/bounces";
import { sesBounceEvent } from "../deploy/lambda";
import { createTestEnv, type TestEnv, type TestUser } from "../support/env";

/**
 * GET /email-deliveries: the user sees what became of each email — sent, then bounced once SES says
 * so — and never another user's.
 */
let env: TestEnv;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  env = await createTestEnv();
  alice = await env.user();
  bob = await env.user();
});

it("lists the latest emails newest first, a bounced one as bounced with SES's bounce type", async () => {
  const client = await alice.call("POST", "/clients", { name: "Gone Ltd", email: "gone@client.example" });
  const sendOne = async () => {
    const draft = await alice.call("POST", "/invoices", {
      clientId: client.body.id,
      lineItems: [{ description: "Work", unitPrice: "10.00" }],
    });
    await alice.call("POST", `/invoices/${draft.body.id}/finalize`);
    expect((await alice.call("POST", `/invoices/${draft.body.id}/send`)).status).toBe(200);
    await env.drainStream(); // the stream subscriber delivers the queued email
  };
  await sendOne();
  env.clock.advance(60_000);
  await sendOne();
  await env.drainStream(); // delivery is the stream subscriber's

  const before = await alice.call("GET", "/email-deliveries");
  expect(before.status).toBe(200);
  expect(before.body).toHaveLength(2);
  expect(before.body.map((d: { status: string }) => d.status)).toEqual(["sent", "sent"]);
  const [newest, oldest] = before.body;
  expect(newest.createdAt > oldest.createdAt).toBe(true);
  expect(newest).toMatchObject({ to: "gone@client.example", detail: null, reportedAt: null });

  // SES reports a hard bounce of the older one.
  const feedback = parseSesEvent(
    sesBounceEvent({ recipient: "gone@client.example", tags: feedbackTags(alice.userId, oldest.id) }),
  );
  expect(await recordFeedback(env.deps, feedback!)).toBe("recorded");

  const after = await alice.call("GET", "/email-deliveries");
  expect(after.body[0]).toEqual(newest);
  expect(after.body[1]).toMatchObject({ id: oldest.id, status: "bounced", detail: "Permanent/NoEmail" });
  expect(after.body[1].reportedAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);

  expect((await bob.call("GET", "/email-deliveries")).body).toEqual([]);
});
