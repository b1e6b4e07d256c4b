import { DescribeTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetRecordsCommand,
  GetShardIteratorCommand,
  TrimmedDataAccessException,
  type _Record,
} from "@aws-sdk/client-dynamodb-streams";
import type { Deps } from "@invoicing/core/deps";
import { settled } from "@invoicing/core/queue/in-process";
import { passesStreamFilters } from "@invoicing/core/stream/filter";
import { STREAM_MAX_RETRY_ATTEMPTS } from "@invoicing/core/stream/retry";
import { handleStreamBatch, type BatchOutcome, type StreamRecord } from "@invoicing/core/stream/subscriber";
import type { GivenUpRecord } from "./stream-failures";

/**
 * The local stand-in for Lambda's stream event source: reads DynamoDB Local's stream of the table
 * and hands each batch to the SAME handler the Lambda runs (core/src/stream/subscriber.ts), in
 * Lambda's record shape. Like the event source mapping, it keeps a position per shard and moves it
 * only past records the handler finished: a record that failed is read again on the next poll.
 * Positions live in memory: a restart reads the stream from its start (24 hours back), which the
 * handler's idempotence makes harmless (no event twice, no email twice).
 *
 * A record that keeps failing is retried STREAM_MAX_RETRY_ATTEMPTS times, as the deployed mapping
 * does (infra/stream.ts), then given up on: `onGiveUp` puts it on the local failure list
 * (packages/local/src/stream-failures.ts, which `npm run jobs -- replay-stream-failures` reads)
 * and the shard moves past it, so one bad record does not stop every later change of its shard.
 */
interface StreamReaderOptions {
  endpoint: string;
  region?: string;
  tableName: string;
  /** The handler; default: the subscriber over `deps`. */
  handle?: (records: StreamRecord[]) => Promise<Pick<BatchOutcome, "failedSequenceNumber">>;
  /** Retries of a failing record before it is given up on (default: the deployed bound). */
  maxRetryAttempts?: number;
  /** Told of each record given up on (npm start: the local failure list). */
  onGiveUp?: (record: GivenUpRecord) => void;
}

export interface StreamReader {
  /**
   * Reads every shard until it has nothing new, feeding the handler, then waits for the work it
   * handed to the in-process queues; returns the records handled.
   */
  drain(): Promise<number>;
  /** Polls continuously (every `intervalMs` when idle) until the returned stop() is called. */
  start(intervalMs?: number, log?: (line: string) => void): () => Promise<void>;
  close(): void;
}

const credentials = { accessKeyId: "local", secretAccessKey: "local" };

export function createStreamReader(deps: Deps, options: StreamReaderOptions): StreamReader {
  const region = options.region ?? "local";
  const streams = new DynamoDBStreamsClient({ endpoint: options.endpoint, region, credentials });
  const dynamo = new DynamoDBClient({ endpoint: options.endpoint, region, credentials });
  const handle = options.handle ?? ((records) => handleStreamBatch(deps, records));
  /** Per shard: the last sequence number handled (or given up on). */
  const positions = new Map<string, string>();
  /** Per failing record (shard and sequence number): how many times it failed so far. */
  const failures = new Map<string, number>();
  const maxRetries = options.maxRetryAttempts ?? STREAM_MAX_RETRY_ATTEMPTS;
  let streamArn: string | undefined;

  async function arn(): Promise<string> {
    if (streamArn) return streamArn;
    const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: options.tableName }));
    if (!Table?.LatestStreamArn) throw new Error(`table ${options.tableName} has no stream`);
    return (streamArn = Table.LatestStreamArn);
  }

  async function shardIds(): Promise<string[]> {
    const ids: string[] = [];
    let start: string | undefined;
    do {
      const out = await streams.send(
        new DescribeStreamCommand({ StreamArn: await arn(), ExclusiveStartShardId: start }),
      );
      for (const shard of out.StreamDescription?.Shards ?? []) if (shard.ShardId) ids.push(shard.ShardId);
      start = out.StreamDescription?.LastEvaluatedShardId;
    } while (start);
    return ids;
  }

  async function iterator(shardId: string): Promise<string | undefined> {
    const after = positions.get(shardId);
    const out = await streams.send(
      new GetShardIteratorCommand({
        StreamArn: await arn(),
        ShardId: shardId,
        ...(after
          ? { ShardIteratorType: "AFTER_SEQUENCE_NUMBER", SequenceNumber: after }
          : { ShardIteratorType: "TRIM_HORIZON" }),
      }),
    );
    return out.ShardIterator;
  }

  /** Reads one shard from its position until it has nothing new or a record fails. */
  async function drainShard(shardId: string): Promise<number> {
    let handled = 0;
    let it = await iterator(shardId);
    while (it) {
      let out;
      try {
        out = await streams.send(new GetRecordsCommand({ ShardIterator: it, Limit: 100 }));
      } catch (error) {
        if (error instanceof ExpiredIteratorException || error instanceof TrimmedDataAccessException) {
          it = await iterator(shardId);
          continue;
        }
        throw error;
      }
      const records = (out.Records ?? []).map(toLambdaRecord);
      if (records.length === 0) break;
      // Only what the deployed mapping's filter lets through reaches the subscriber (core/src/stream/filter.ts).
      const wanted = records.filter((record) => passesStreamFilters(record));
      const { failedSequenceNumber } = wanted.length > 0 ? await handle(wanted) : { failedSequenceNumber: undefined };
      const done =
        failedSequenceNumber === undefined
          ? records
          : records.slice(
              0,
              records.findIndex((r) => r.dynamodb?.SequenceNumber === failedSequenceNumber),
            );
      const last = done[done.length - 1]?.dynamodb?.SequenceNumber;
      if (last) positions.set(shardId, last);
      handled += done.length;
      if (failedSequenceNumber !== undefined) {
        const key = `${shardId} ${failedSequenceNumber}`;
        const failed = (failures.get(key) ?? 0) + 1;
        if (failed <= maxRetries) {
          failures.set(key, failed);
          break; // read again from there on the next drain
        }
        // Its first attempt and every retry failed: give it up, move past it, and read on afresh.
        failures.delete(key);
        options.onGiveUp?.({ streamArn: await arn(), shardId, sequenceNumber: failedSequenceNumber });
        positions.set(shardId, failedSequenceNumber);
        it = await iterator(shardId);
        continue;
      }
      it = out.NextShardIterator;
    }
    return handled;
  }

  const readAll = async () => {
    let total = 0;
    for (const shardId of await shardIds()) total += await drainShard(shardId);
    return total;
  };
  const reader: StreamReader = {
    async drain() {
      const total = await readAll();
      // And what the subscriber handed to the in-process queues (emails, webhook first attempts):
      // a drained stream is one whose work is done, as the tests and the jobs command expect.
      await settled(deps);
      return total;
    },
    start(intervalMs = 500, log = () => {}) {
      let stopped = false;
      let timer: NodeJS.Timeout | undefined;
      let running: Promise<void> | undefined;
      // Polling does not wait for the queues' workers: a slow receiver holds its worker, never the
      // stream (API.md section 15).
      const tick = () => {
        running = readAll()
          .then(
            () => undefined,
            (error: unknown) => log(`stream read failed: ${error instanceof Error ? error.message : String(error)}`),
          )
          .finally(() => {
            running = undefined;
            if (!stopped) timer = setTimeout(tick, intervalMs);
          });
      };
      tick();
      return async () => {
        stopped = true;
        clearTimeout(timer);
        await running;
      };
    },
    close() {
      streams.destroy();
      dynamo.destroy();
    },
  };
  return reader;
}

/**
 * A GetRecords record in the shape Lambda's DynamoDB Streams event gives: the same fields, with
 * ApproximateCreationDateTime as epoch seconds (the SDK parses it into a Date).
 */
export function toLambdaRecord(record: _Record): StreamRecord {
  const d = record.dynamodb;
  const created = d?.ApproximateCreationDateTime;
  return {
    eventID: record.eventID,
    eventName: record.eventName,
    ...(record.userIdentity
      ? { userIdentity: { type: record.userIdentity.Type, principalId: record.userIdentity.PrincipalId } }
      : {}),
    dynamodb: {
      Keys: d?.Keys as never,
      NewImage: withEmptyMaps(d?.NewImage) as never,
      OldImage: withEmptyMaps(d?.OldImage) as never,
      SequenceNumber: d?.SequenceNumber,
      ApproximateCreationDateTime:
        created instanceof Date ? Math.floor(created.getTime() / 1000) : (created as number | undefined),
    },
  };
}

/**
 * The Streams client reads an empty map attribute (`{"M":{}}` on the wire) as `{}`, an attribute
 * value of no type, which unmarshall() refuses — so a record with one (an invoice's
 * `creditedQuantities` after a goodwill-only credit note) failed for ever and held back its shard.
 * An empty list keeps its `{"L":[]}`, so `{}` can only have been an empty map: put it back, at any
 * depth, as Lambda's event (plain JSON) has it.
 */
function withEmptyMaps<T>(image: T): T {
  if (!image) return image;
  const repair = (value: unknown): unknown => {
    if (!value || typeof value !== "object") return value;
    const av = value as Record<string, unknown>;
    if (Object.keys(av).length === 0) return { M: {} };
    if (av.M) return { M: Object.fromEntries(Object.entries(av.M as object).map(([k, v]) => [k, repair(v)])) };
    if (Array.isArray(av.L)) return { L: av.L.map(repair) };
    return value;
  };
  return Object.fromEntries(Object.entries(image as object).map(([k, v]) => [k, repair(v)])) as T;
}
