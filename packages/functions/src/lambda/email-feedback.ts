import type { Context, SNSEvent } from "aws-lambda";
import { withDeadline } from "@invoicing/core/db/deadline";
import { invocationDeadline } from "./deadline";
import { recordFeedbackNotices } from "@invoicing/core/email/bounces";
import { createDeps } from "../capabilities/create-deps";
import { log, withLogContext } from "@invoicing/core/observability/context-log";

/**
 * The SNS subscriber of the "EmailFeedback" topic (infra/email.ts): SES's bounce, complaint and reject
 * events for the emails this stage sent. Each marks its outbox record and recipients
 * (core/src/email/bounces.ts). A message that is not such an event, or not about one of our emails,
 * is counted and skipped; a database failure throws, so Lambda retries the delivery (marking twice
 * is harmless), twice, then sends it to the EmailFeedbackFailures queue (infra/email.ts), which
 * `npm run jobs -- replay-email-feedback-failures` replays. Logs counts only: addresses are personal data.
 */
// Marks outbox records and recipients: the table is all it touches.
const deps = createDeps(process.env);

export function handler(
  event: SNSEvent,
  context?: Context,
): Promise<{ recorded: number; emailGone: number; ignored: number }> {
  return withLogContext({ source: "email-feedback", requestId: context?.awsRequestId }, () =>
    withDeadline(invocationDeadline(context), () => handle(event)),
  );
}

async function handle(event: SNSEvent): Promise<{ recorded: number; emailGone: number; ignored: number }> {
  const counts = await recordFeedbackNotices(deps, event);
  log("info", "email feedback", counts);
  return counts;
}
