import {
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  TrimmedDataAccessException,
} from "@aws-sdk/client-dynamodb-streams";
import type { Deps } from "@invoicing/core/deps";
import { passesStreamFilters } from "@invoicing/core/stream/filter";
import { handleStreamBatch, type BatchOutcome, type StreamRecord } from "@invoicing/core/stream/subscriber";
import { readLocalFailures, writeLocalFailures } from "./stream-failures";
import { replayQueue } from "./queue-replay";
import { toLambdaRecord } from "./stream-reader";

/**
 * Replaying what the stream subscriber gave up on (`npm run jobs -- replay-stream-failures`;
 * docs/operations.md). When a record keeps failing, Lambda's event source mapping gives up on it
 * after its retries or its age bound (infra/stream.ts) and sends the failure queue a message that
 * names the batch, not its records: the stream, the shard, the first and last sequence number. The
 * records are still in the stream for 24 hours after the change; this reads them again from there
 * and runs the same subscriber on them (the handler is idempotent: what was done is not doubled).
 *
 * A message is deleted only when its whole range was handled: the reader has reached the range's
 * end sequence number (read it, or read past it), or the shard ended (a closed shard's last page has
 * no next iterator). An empty page is not the end: AWS may answer empty pages on an open shard
 * before the records that follow. Reading stops at a time cap instead (`incomplete`: the message
 * stays for the next run). One whose records the stream no longer holds (older than 24 hours) is
 * left in the queue and reported `expired`: its changes are in the table, but their events,
 * webhooks and emails were not made (docs/operations.md says what to do); one that fails again
 * stays for a later replay.
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
  /** The time cap came before the range's end: nothing is lost, the message stays. */
  | { outcome: "incomplete"; records: number }
  | { outcome: "expired" };

/** How long one range may be read for, and how long to wait after an empty page (AWS's advice: back off). */
export interface ReplayLimits {
  timeLimitMs: number;
  emptyPageWaitMs: number;
  /** The clock and the wait, for the tests. */
  now?: () => number;
  wait?: (ms: number) => Promise<void>;
}
const DEFAULT_LIMITS: ReplayLimits = { timeLimitMs: 60_000, emptyPageWaitMs: 250 };

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
  limits: ReplayLimits = DEFAULT_LIMITS,
): Promise<ReplayOutcome> {
  const now = limits.now ?? Date.now;
  const wait = limits.wait ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const stopAt = now() + limits.timeLimitMs;
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
  // Done when the end sequence number was read (or passed), or the shard ended (no next iterator).
  while (iterator) {
    const out = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 100 }));
    const page = out.Records ?? [];
    const inRange = page.map(toLambdaRecord).filter((record) => BigInt(record.dynamodb?.SequenceNumber ?? "0") <= end);
    const wanted = inRange.filter((record) => passesStreamFilters(record));
    if (wanted.length > 0) {
      const { failedSequenceNumber } = await handle(wanted);
      if (failedSequenceNumber) return { outcome: "failed", records, failedSequenceNumber };
    }
    records += inRange.length;
    if (page.some((record) => BigInt(record.dynamodb?.SequenceNumber ?? "0") >= end)) {
      return { outcome: "replayed", records };
    }
    iterator = out.NextShardIterator;
    if (!iterator) break;
    if (now() >= stopAt) return { outcome: "incomplete", records };
    if (page.length === 0) await wait(limits.emptyPageWaitMs);
  }
  return { outcome: "replayed", records };
}

/** Every message the failure queue holds, replayed; the summary of each. */
export async function replayFailureQueue(
  deps: Deps,
  options: { queueUrl: string; region: string; streamsEndpoint?: string },
): Promise<{ messageId: string; batch?: FailedBatch; result: ReplayOutcome | { outcome: "unreadable" } }[]> {
  const streams = new DynamoDBStreamsClient({
    region: options.region,
    ...(options.streamsEndpoint ? { endpoint: options.streamsEndpoint } : {}),
  });
  const handle: Handle = (records) => handleStreamBatch(deps, records);
  try {
    // Long enough to replay a batch; a message left in the queue comes back after it.
    const queue = { queueUrl: options.queueUrl, region: options.region, visibilityTimeoutSeconds: 300 };
    type Entry = { batch?: FailedBatch; result: ReplayOutcome | { outcome: "unreadable" } };
    return await replayQueue<Entry>(queue, async (body) => {
      const batch = failedBatchOf(body);
      if (!batch) return { done: false, entry: { result: { outcome: "unreadable" } } };
      const result = await replayBatch(streams, batch, handle);
      return { done: result.outcome === "replayed", entry: { batch, result } };
    });
  } finally {
    streams.destroy();
  }
}

/**
 * `npm start`'s failure list (packages/local/src/stream-failures.ts) replayed from DynamoDB Local's
 * stream, as the queue is deployed: each line that went through is removed, the others stay.
 */
export async function replayLocalFailures(
  deps: Deps,
  options: { file: string; streamsEndpoint: string; limits?: ReplayLimits },
): Promise<{ messageId: string; batch?: FailedBatch; result: ReplayOutcome | { outcome: "unreadable" } }[]> {
  const streams = new DynamoDBStreamsClient({
    region: "local",
    endpoint: options.streamsEndpoint,
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
  const handle: Handle = (records) => handleStreamBatch(deps, records);
  const results: Awaited<ReturnType<typeof replayLocalFailures>> = [];
  const staying: string[] = [];
  try {
    for (const [index, message] of readLocalFailures(options.file).entries()) {
      const messageId = `local-${index + 1}`;
      const batch = failedBatchOf(message);
      if (!batch) {
        results.push({ messageId, result: { outcome: "unreadable" } });
        staying.push(message);
        continue;
      }
      const result = await replayBatch(streams, batch, handle, options.limits);
      if (result.outcome !== "replayed") staying.push(message);
      results.push({ messageId, batch, result });
    }
  } finally {
    streams.destroy();
  }
  writeLocalFailures(options.file, staying);
  return results;
}
