import { beforeAll, expect, it, vi } from "vitest";
import { feedbackTags } from "@invoicing/core/email/bounces";
import { feedbackEventOf, replayFeedbackFailures, replayFeedbackMessage } from "@invoicing/local/feedback-replay";
import { sesBounceEvent } from "../deploy/lambda";
import { createTestEnv, type TestEnv, type TestUser } from "../support/env";
import { startFakeSqs } from "../support/fake-sqs";

/**
 * Issue 39 item 7: what the SES feedback function gave up on (SNS invokes it asynchronously; after
 * Lambda's retries the invocation lands in the EmailFeedbackFailures queue as Lambda's on-failure
 * record) is recorded again by `npm run jobs -- replay-email-feedback-failures`: the message's body,
 * in Lambda's shape, and the queue's receive and delete against the SQS stand-in
 * (test/support/fake-sqs.ts).
 */
let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});

/** Lambda's on-failure record of an asynchronous invocation (docs.aws.amazon.com, "Retaining records of asynchronous invocations"). */
const onFailureRecord = (snsMessage: unknown) =>
  JSON.stringify({
    version: "1.0",
    timestamp: "2026-11-27T12:00:00.000Z",
    requestContext: {
      requestId: "e4b46cbf-b738-xmpl-8880-a18cdf61200e",
      functionArn: "arn:aws:lambda:us-east-1:123456789012:function:invoicing-production-EmailFeedback:$LATEST",
      condition: "RetriesExhausted",
      approximateInvokeCount: 3,
    },
    requestPayload: {
      Records: [
        {
          EventSource: "aws:sns",
          EventVersion: "1.0",
          EventSubscriptionArn: "arn:aws:sns:us-east-1:123456789012:invoicing-production-EmailFeedback:1",
          Sns: {
            Type: "Notification",
            MessageId: "95df01b4-ee98-5cb9-9903-4c221d41eb5e",
            Message: JSON.stringify(snsMessage),
          },
        },
      ],
    },
    responseContext: { statusCode: 200, executedVersion: "$LATEST", functionError: "Unhandled" },
    responsePayload: { errorType: "TimeoutError", errorMessage: "Connection timed out" },
  });

/** An invoice emailed and delivered; its delivery's id. */
async function sentEmail(user: TestUser): Promise<string> {
  const client = await user.call("POST", "/clients", { name: "Gone Ltd", email: "gone@client.example" });
  const draft = await user.call("POST", "/invoices", {
    clientId: client.body.id,
    lineItems: [{ description: "Work", unitPrice: "10.00" }],
  });
  await user.call("POST", `/invoices/${draft.body.id}/finalize`);
  expect((await user.call("POST", `/invoices/${draft.body.id}/send`)).status).toBe(200);
  await env.drainStream();
  const [sent] = (await user.call("GET", "/email-deliveries")).body as { id: string; status: string }[];
  expect(sent!.status).toBe("sent");
  return sent!.id;
}

it("a bounce the function gave up on is recorded by the replay: the email shows bounced", async () => {
  const user = await env.user();
  const sentId = await sentEmail(user);

  const body = onFailureRecord(
    sesBounceEvent({ recipient: "gone@client.example", tags: feedbackTags(user.userId, sentId) }),
  );
  expect(await replayFeedbackMessage(env.deps, body)).toEqual({
    outcome: "replayed",
    recorded: 1,
    emailGone: 0,
    ignored: 0,
  });
  const [after] = (await user.call("GET", "/email-deliveries")).body as {
    id: string;
    status: string;
    detail: string;
  }[];
  expect(after).toMatchObject({ id: sentId, status: "bounced", detail: "Permanent/NoEmail" });
  // Replayed twice (a message seen again): still one bounce, nothing else changes.
  expect(await replayFeedbackMessage(env.deps, body)).toMatchObject({ outcome: "replayed", recorded: 1 });
});

it("a message that is not Lambda's on-failure record is left alone", async () => {
  expect(feedbackEventOf("not json")).toBeUndefined();
  expect(feedbackEventOf(JSON.stringify({ requestPayload: { nothing: true } }))).toBeUndefined();
  expect(await replayFeedbackMessage(env.deps, "{}")).toEqual({ outcome: "unreadable" });
});

it("the replay of the queue takes each message once and deletes only what went through", async () => {
  const sqs = await startFakeSqs();
  vi.stubEnv("AWS_ACCESS_KEY_ID", "local");
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", "local");
  try {
    const user = await env.user();
    const id = await sentEmail(user);
    const queueUrl = `${sqs.url}/123456789012/invoicing-production-EmailFeedbackFailuresQueue`;
    const bounce = onFailureRecord(
      sesBounceEvent({ recipient: "gone@client.example", tags: feedbackTags(user.userId, id) }),
    );
    sqs.put(queueUrl, "not a record of ours");
    sqs.put(queueUrl, bounce);
    const results = await replayFeedbackFailures(env.deps, { queueUrl, region: "us-east-1" });
    // Each once, though the unreadable one came again on the next receive (it stays in the queue).
    expect(results.map((r) => r.result.outcome)).toEqual(["unreadable", "replayed"]);
    expect(sqs.messages.map((m) => [m.body === bounce ? "bounce" : "other", m.deleted === true])).toEqual([
      ["other", false],
      ["bounce", true],
    ]);
    const [after] = (await user.call("GET", "/email-deliveries")).body as { id: string; status: string }[];
    expect(after).toMatchObject({ id, status: "bounced" });
  } finally {
    vi.unstubAllEnvs();
    await sqs.close();
  }
});
