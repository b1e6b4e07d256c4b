import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from "aws-lambda";
import { handleStreamBatch, type StreamRecord } from "@invoicing/core/stream/subscriber";
import { createDeliveryDeps } from "../capabilities/delivery-deps";

/**
 * The table stream's subscriber (infra/stream.ts): events, webhook first attempts, the bus and
 * email delivery (packages/core/src/stream/subscriber.ts). A record that fails is reported with
 * ReportBatchItemFailures, so Lambda retries the batch from that record on: the ones before it are
 * not processed again, and none is skipped.
 */
const deps = createDeliveryDeps();

export async function handler(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  const outcome = await handleStreamBatch(deps, event.Records as StreamRecord[]);
  console.log(
    JSON.stringify({
      message: "stream batch",
      records: event.Records.length,
      events: outcome.events,
      emails: outcome.emails,
      attempts: outcome.attempts,
    }),
  );
  return { batchItemFailures: outcome.failedSequenceNumber ? [{ itemIdentifier: outcome.failedSequenceNumber }] : [] };
}
