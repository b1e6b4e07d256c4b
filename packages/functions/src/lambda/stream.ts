import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from "aws-lambda";
import { withDeadline } from "@invoicing/core/db/deadline";
import { invocationDeadline } from "./deadline";
import { log, withLogContext } from "@invoicing/core/observability/context-log";
import { handleStreamBatch, type StreamRecord } from "@invoicing/core/stream/subscriber";
import { createDeps } from "../capabilities/create-deps";
import { eventBus } from "../capabilities/event-bus";
import { workQueue } from "../capabilities/work-queue";

/**
 * The table stream's subscriber (infra/stream.ts): events, the bus and the reports ledger, in order;
 * email delivery, webhook first attempts, checkout expiries and Peppol hand-overs go to their queues
 * (packages/core/src/stream/subscriber.ts). A record that fails is reported with
 * ReportBatchItemFailures, so Lambda retries the batch from that record on: the ones before it are
 * not processed again, and none is skipped. The batch stops taking records close to the function's
 * timeout (the rest comes again), and every log line carries the invocation's id.
 */
// The bus, and the queues it hands email delivery, webhook first attempts, checkout expiries and
// Peppol hand-overs to.
const deps = createDeps(process.env, [eventBus, workQueue]);

export async function handler(event: DynamoDBStreamEvent, context?: Context): Promise<DynamoDBBatchResponse> {
  return withLogContext({ source: "stream", requestId: context?.awsRequestId }, async () => {
    // The batch stops taking records 30 s before the timeout; the deadline bounds every table call.
    const outcome = await withDeadline(invocationDeadline(context), () =>
      handleStreamBatch(deps, event.Records as StreamRecord[], {
        remainingMs: context ? () => context.getRemainingTimeInMillis() : undefined,
      }),
    );
    log("info", "stream batch", {
      records: event.Records.length,
      events: outcome.events,
      handedOff: outcome.handedOff,
      ...(outcome.failedSequenceNumber ? { failedSequenceNumber: outcome.failedSequenceNumber } : {}),
    });
    return {
      batchItemFailures: outcome.failedSequenceNumber ? [{ itemIdentifier: outcome.failedSequenceNumber }] : [],
    };
  });
}
