import { beforeAll, expect, it } from "vitest";
import { feedbackTags } from "@invoicing/core/email/bounces";
import { feedbackEventOf, replayFeedbackMessage } from "@invoicing/local/feedback-replay";
import { sesBounceEvent } from "../deploy/lambda";
import { createTestEnv, type TestEnv } from "../support/env";

/**
 * Issue 39 item 7: what the SES feedback function gave up on (SNS invokes it asynchronously; after
 * Lambda's retries the invocation lands in the EmailFeedbackFailures queue as Lambda's on-failure
 * record) is recorded again by `npm run jobs -- replay-email-feedback-failures`. The queue's receive
 * and delete are not run here (there is no local SQS); the message's body, in Lambda's shape, is.
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

it("a bounce the function gave up on is recorded by the replay: the email shows bounced", async () => {
  const user = await env.user();
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

  const body = onFailureRecord(
    sesBounceEvent({ recipient: "gone@client.example", tags: feedbackTags(user.userId, sent!.id) }),
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
  expect(after).toMatchObject({ id: sent!.id, status: "bounced", detail: "Permanent/NoEmail" });
  // Replayed twice (a message seen again): still one bounce, nothing else changes.
  expect(await replayFeedbackMessage(env.deps, body)).toMatchObject({ outcome: "replayed", recorded: 1 });
});

it("a message that is not Lambda's on-failure record is left alone", async () => {
  expect(feedbackEventOf("not json")).toBeUndefined();
  expect(feedbackEventOf(JSON.stringify({ requestPayload: { nothing: true } }))).toBeUndefined();
  expect(await replayFeedbackMessage(env.deps, "{}")).toEqual({ outcome: "unreadable" });
});
