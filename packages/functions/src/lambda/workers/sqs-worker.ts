import type { Context, SQSBatchResponse, SQSEvent } from "aws-lambda";
import type { QueueName, WorkMessage, Worker } from "@invoicing/core/queue/port";
import { errorName, log, withLogContext } from "@invoicing/core/observability/context-log";
import { withDeadline } from "@invoicing/core/db/deadline";
import { invocationDeadline } from "../deadline";
import { createDeps, type Capability } from "../../capabilities/create-deps";

/** Left of the Lambda's time when a worker takes no new record: the last one's worst case and the answer. */
const FINISH_MARGIN_MS = 15_000;

/**
 * A work queue's Lambda worker (infra/queues.ts: one per queue, its concurrency bounded there). SQS
 * gives a batch of messages (BATCH_SIZE); the worker handles them until its deadline (the
 * invocation's time less FINISH_MARGIN_MS) and answers with a partial batch response: only the
 * messages it could not handle come again, and after the queue's redrive count go to its
 * dead-letter queue (docs/operations.md, "Queues"). A message that is not a WorkMessage of this
 * queue is reported too, so it ends in the dead-letter queue instead of being lost.
 */
export function sqsWorker(
  queue: QueueName,
  worker: Worker,
  capabilities: readonly Capability[] = [],
): (event: SQSEvent, context?: Context) => Promise<SQSBatchResponse> {
  const deps = createDeps(process.env, capabilities);
  return (event, context) =>
    withLogContext({ source: `${queue}-worker`, requestId: context?.awsRequestId }, async () => {
      const deadline = context?.getRemainingTimeInMillis
        ? Date.now() + context.getRemainingTimeInMillis() - FINISH_MARGIN_MS
        : undefined;
      const failures: string[] = [];
      const ids = new Map<WorkMessage, string>();
      for (const record of event.Records) {
        const message = parse(record.body);
        if (message?.queue === queue) ids.set(message, record.messageId);
        else failures.push(record.messageId);
      }
      // Every table call of the invocation stops by its deadline (../deadline.ts), as in every entry point.
      const result = await withDeadline(invocationDeadline(context), () => worker(deps, [...ids.keys()], { deadline }));
      for (const message of result.retry) failures.push(ids.get(message)!);
      // Counts only, never record contents.
      log("info", "worker batch", { queue, messages: event.Records.length, ...result.tally, retry: failures.length });
      return { batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })) };
    });
}

function parse(body: string): WorkMessage | undefined {
  try {
    const message = JSON.parse(body) as WorkMessage;
    return Array.isArray(message?.keys) && typeof message.userId === "string" ? message : undefined;
  } catch (error) {
    log("warn", "not a work message", { error: errorName(error) });
    return undefined;
  }
}
