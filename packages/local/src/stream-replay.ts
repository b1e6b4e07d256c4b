import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import {
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  TrimmedDataAccessException,
} from "@aws-sdk/client-dynamodb-streams";
import type { Deps } from "@invoicing/core/context";
import { passesStreamFilters } from "@invoicing/core/stream/filter";
import { handleStreamBatch, type BatchOutcome, type StreamRecord } from "@invoicing/core/stream/subscriber";
import { toLambdaRecord } from "./stream-reader";

/**
 * Replaying what the stream subscriber gave up on (`npm run jobs -- replay-stream-failures`;
 * docs/operations.md). When a record keeps failing, Lambda's event source mapping gives up on it
 * after its retries or its age bound (infra/stream.ts) and sends the failure queue a message that
 * names the batch, not its records: the stream, the shard, the first and last sequence number. The
 * records are still in the stream for 24 hours after the change; this reads them again from there
 * and runs the same subscriber on them (the handler is idempotent: what was done is not doubled).
 *
 * A message is deleted only when its whole range was handled. One whose records the stream no
 * longer holds (older than 24 hours) is left in the queue and reported `expired`: its changes are in
 * the table, but their events, webhooks and emails were not made (docs/operations.md says what to
 * do); one that fails again stays for a later replay.
 */
interface FailedBatch {
  streamArn: string;
  shardId: string;
  startSequenceNumber: string;
  endSequenceNumber: string;
}

type ReplayOutcome =
  | { outcome: "replayed"; records: number }
  | { outcome: "failed"; records: number; failedSequenceNumber: string }
  | { outcome: "expired" };

/** The DDBStreamBatchInfo of Lambda's on-failure message for a DynamoDB stream, or undefined. */
export function failedBatchOf(body: string): FailedBatch | undefined {
  try {
    const info = (JSON.parse(body) as { DDBStreamBatchInfo?: Partial<FailedBatch> }).DDBStreamBatchInfo;
    if (info?.streamArn && info.shardId && info.startSequenceNumber && info.endSequenceNumber) {
      return {
        streamArn: info.streamArn,
        shardId: info.shardId,
        startSequenceNumber: info.startSequenceNumber,
        endSequenceNumber: info.endSequenceNumber,
      };
    }
  } catch {
    // not JSON: not a message of ours
  }
  return undefined;
}

type Handle = (records: StreamRecord[]) => Promise<Pick<BatchOutcome, "failedSequenceNumber">>;

/** Reads the batch's records from the stream again and hands them to the subscriber. */
export async function replayBatch(
  streams: DynamoDBStreamsClient,
  batch: FailedBatch,
  handle: Handle,
): Promise<ReplayOutcome> {
  let iterator: string | undefined;
  try {
    ({ ShardIterator: iterator } = await streams.send(
      new GetShardIteratorCommand({
        StreamArn: batch.streamArn,
        ShardId: batch.shardId,
        ShardIteratorType: "AT_SEQUENCE_NUMBER",
        SequenceNumber: batch.startSequenceNumber,
      }),
    ));
  } catch (error) {
    if (error instanceof TrimmedDataAccessException) return { outcome: "expired" };
    throw error;
  }
  const end = BigInt(batch.endSequenceNumber);
  let records = 0;
  while (iterator) {
    const out = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 100 }));
    const inRange = (out.Records ?? [])
      .map(toLambdaRecord)
      .filter((record) => BigInt(record.dynamodb?.SequenceNumber ?? "0") <= end);
    const wanted = inRange.filter((record) => passesStreamFilters(record));
    if (wanted.length > 0) {
      const { failedSequenceNumber } = await handle(wanted);
      if (failedSequenceNumber) return { outcome: "failed", records, failedSequenceNumber };
    }
    records += inRange.length;
    const past = (out.Records ?? []).some((record) => BigInt(record.dynamodb?.SequenceNumber ?? "0") > end);
    // An open shard answers an empty page at its end: the range is done when nothing more comes.
    if (past || (out.Records ?? []).length === 0) break;
    iterator = out.NextShardIterator;
  }
  return { outcome: "replayed", records };
}

/** Every message the failure queue holds, replayed; the summary of each. */
export async function replayFailureQueue(
  deps: Deps,
  options: { queueUrl: string; region: string; streamsEndpoint?: string },
): Promise<{ messageId: string; batch?: FailedBatch; result: ReplayOutcome | { outcome: "unreadable" } }[]> {
  const sqs = new SQSClient({ region: options.region });
  const streams = new DynamoDBStreamsClient({
    region: options.region,
    ...(options.streamsEndpoint ? { endpoint: options.streamsEndpoint } : {}),
  });
  const handle: Handle = (records) => handleStreamBatch(deps, records);
  const results: Awaited<ReturnType<typeof replayFailureQueue>> = [];
  const seen = new Set<string>();
  try {
    for (;;) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: options.queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          // Long enough to replay a batch; a message left in the queue comes back after it.
          VisibilityTimeout: 300,
        }),
      );
      const fresh = Messages.filter((m) => m.MessageId && !seen.has(m.MessageId));
      if (fresh.length === 0) break;
      for (const message of fresh) {
        seen.add(message.MessageId!);
        const batch = failedBatchOf(message.Body ?? "");
        if (!batch) {
          results.push({ messageId: message.MessageId!, result: { outcome: "unreadable" } });
          continue;
        }
        const result = await replayBatch(streams, batch, handle);
        if (result.outcome === "replayed") {
          await sqs.send(
            new DeleteMessageCommand({ QueueUrl: options.queueUrl, ReceiptHandle: message.ReceiptHandle }),
          );
        }
        results.push({ messageId: message.MessageId!, batch, result });
      }
    }
  } finally {
    sqs.destroy();
    streams.destroy();
  }
  return results;
}
