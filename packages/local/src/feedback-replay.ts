import type { Deps } from "@invoicing/core/deps";
import { type FeedbackNotices, recordFeedbackNotices } from "@invoicing/core/email/bounces";
import { replayQueue } from "./queue-replay";

/**
 * Replaying what the SES feedback function gave up on (`npm run jobs -- replay-email-feedback-failures`;
 * docs/operations.md). SNS invokes the function asynchronously; after Lambda's two retries the
 * invocation goes to the EmailFeedbackFailures queue (infra/email.ts) as Lambda's on-failure record,
 * which carries the whole SNS event (`requestPayload`). This records its notices again, as the
 * function would (idempotent: marking twice is harmless), and deletes the message once they went through.
 */

/** The SNS event of Lambda's on-failure record for an asynchronous invocation, or undefined. */
export function feedbackEventOf(body: string): FeedbackNotices | undefined {
  try {
    const payload = (JSON.parse(body) as { requestPayload?: FeedbackNotices }).requestPayload;
    if (payload && Array.isArray(payload.Records)) return payload;
  } catch {
    // not JSON: not a message of ours
  }
  return undefined;
}

type Outcome =
  | { outcome: "replayed"; recorded: number; emailGone: number; ignored: number }
  | { outcome: "failed"; error: string }
  | { outcome: "unreadable" };

/** One queue message's body, replayed. */
export async function replayFeedbackMessage(deps: Pick<Deps, "db" | "clock">, body: string): Promise<Outcome> {
  const event = feedbackEventOf(body);
  if (!event) return { outcome: "unreadable" };
  try {
    return { outcome: "replayed", ...(await recordFeedbackNotices(deps, event)) };
  } catch (error) {
    return { outcome: "failed", error: error instanceof Error ? error.name : String(error) };
  }
}

/** Every message the queue holds, replayed; the ones that went through are deleted. */
export function replayFeedbackFailures(
  deps: Deps,
  options: { queueUrl: string; region: string },
): Promise<{ messageId: string; result: Outcome }[]> {
  return replayQueue({ ...options, visibilityTimeoutSeconds: 120 }, async (body) => {
    const result = await replayFeedbackMessage(deps, body);
    return { done: result.outcome === "replayed", entry: { result } };
  });
}
