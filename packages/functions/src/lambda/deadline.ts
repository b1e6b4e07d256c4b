import type { Context } from "aws-lambda";
import { withDeadline } from "@invoicing/core/db/deadline";

/**
 * What each Lambda keeps of its remaining time to answer after its last DynamoDB call gave up: a
 * problem+json 503, a log line, a batch's failure report.
 */
export const DEADLINE_MARGIN_MS = 1_500;

/** The invocation's deadline (epoch ms) from the Lambda's remaining time, or undefined without a context. */
export function invocationDeadline(context: Pick<Context, "getRemainingTimeInMillis"> | undefined): number | undefined {
  if (!context?.getRemainingTimeInMillis) return undefined;
  return Date.now() + context.getRemainingTimeInMillis() - DEADLINE_MARGIN_MS;
}

/**
 * A handler whose work runs under its invocation's deadline (core/src/db/deadline.ts): every
 * DynamoDB call of the invocation stops by it.
 */
export function withInvocationDeadline<E, C extends Pick<Context, "getRemainingTimeInMillis"> | undefined, R>(
  handler: (event: E, context: C) => Promise<R>,
): (event: E, context: C) => Promise<R> {
  return (event, context) => withDeadline(invocationDeadline(context), () => handler(event, context));
}
