import { DescribeTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from "@aws-sdk/client-dynamodb-streams";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { afterAll, beforeAll, expect, it } from "vitest";
import { handleStreamBatch } from "@invoicing/core/stream/subscriber";
import { failedBatchOf, replayBatch } from "@invoicing/local/stream-replay";
import { createTestEnv, type TestEnv } from "../support/env";
import { startFaultProxy } from "../support/fault-proxy";

/**
 * Issue 30 C: what the stream subscriber gave up on is replayed from the failure queue's message
 * (`npm run jobs -- replay-stream-failures`). The message, in the shape Lambda sends to an on-failure
 * destination for a DynamoDB stream, names the shard and sequence range; the records are read from
 * DynamoDB Local's stream again and the subscriber makes their events, once however often replayed.
 * (The SQS receive/delete around it is not run here: there is no local SQS.)
 */
let env: TestEnv;
const credentials = { accessKeyId: "local", secretAccessKey: "local" };
let streams: DynamoDBStreamsClient;

beforeAll(async () => {
  env = await createTestEnv();
  streams = new DynamoDBStreamsClient({ endpoint: env.endpoint, region: "local", credentials });
});
afterAll(() => streams.destroy());

/** Lambda's on-failure record for a stream batch (docs.aws.amazon.com, "Retaining records of asynchronous invocations"). */
const lambdaFailureMessage = (streamArn: string, shardId: string, start: string, end: string) =>
  JSON.stringify({
    requestContext: {
      requestId: "316aa6d0-8154-xmpl-9af7-85d5f4a6bc81",
      functionArn: "arn:aws:lambda:us-east-1:123456789012:function:invoicing-production-StreamSubscriber",
      condition: "RetryAttemptsExhausted",
      approximateInvokeCount: 6,
    },
    responseContext: { statusCode: 200, executedVersion: "$LATEST", functionError: "Unhandled" },
    version: "1.0",
    timestamp: "2026-11-22T09:31:00.000Z",
    DDBStreamBatchInfo: {
      shardId,
      startSequenceNumber: start,
      endSequenceNumber: end,
      approximateArrivalOfFirstRecord: "2026-11-22T09:30:00Z",
      approximateArrivalOfLastRecord: "2026-11-22T09:30:01Z",
      batchSize: 2,
      streamArn,
    },
  });

async function clientRecords(): Promise<{ streamArn: string; shardId: string; sequences: string[] }> {
  const dynamo = new DynamoDBClient({ endpoint: env.endpoint, region: "local", credentials });
  const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: env.tableName }));
  dynamo.destroy();
  const streamArn = Table!.LatestStreamArn!;
  const { StreamDescription } = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
  const shardId = StreamDescription!.Shards!.at(-1)!.ShardId!;
  let { ShardIterator: iterator } = await streams.send(
    new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shardId, ShardIteratorType: "TRIM_HORIZON" }),
  );
  const sequences: string[] = [];
  while (iterator) {
    const out = await streams.send(new GetRecordsCommand({ ShardIterator: iterator }));
    if (!out.Records?.length) break;
    for (const record of out.Records) {
      const sk = String(unmarshall(record.dynamodb!.Keys as never).sk);
      if (sk.startsWith("CLIENT#")) sequences.push(record.dynamodb!.SequenceNumber!);
    }
    iterator = out.NextShardIterator;
  }
  return { streamArn, shardId, sequences };
}

it("replays the records a failure message names, once however often it is replayed", async () => {
  const user = await env.user();
  for (const name of ["Lost A", "Lost B"]) expect((await user.call("POST", "/clients", { name })).status).toBe(201);
  const { streamArn, shardId, sequences } = await clientRecords();
  expect(sequences).toHaveLength(2);
  const events = async () =>
    ((await user.call("GET", "/events")).body as { type: string; data: { name: string } }[])
      .map((e) => `${e.type} ${e.data.name}`)
      .sort();
  expect(await events()).toEqual([]); // the subscriber never handled them

  const batch = failedBatchOf(lambdaFailureMessage(streamArn, shardId, sequences[0]!, sequences[1]!));
  expect(batch).toEqual({ streamArn, shardId, startSequenceNumber: sequences[0], endSequenceNumber: sequences[1] });
  const handle = (records: Parameters<typeof handleStreamBatch>[1]) => handleStreamBatch(env.deps, records);
  // The range holds the two clients and what lies between them (B's id counter): all read, only the
  // clients make events.
  const replayed = await replayBatch(streams, batch!, handle);
  expect(replayed.outcome).toBe("replayed");
  expect((replayed as { records: number }).records).toBeGreaterThanOrEqual(2);
  expect(await events()).toEqual(["client.created Lost A", "client.created Lost B"]);

  // A second replay (the message seen twice) doubles nothing.
  expect(await replayBatch(streams, batch!, handle)).toMatchObject({ outcome: "replayed" });
  expect(await events()).toEqual(["client.created Lost A", "client.created Lost B"]);
});

it("only the named range: a record after its end is not handled", async () => {
  const user = await env.user();
  for (const name of ["First", "Second"]) expect((await user.call("POST", "/clients", { name })).status).toBe(201);
  const { streamArn, shardId, sequences } = await clientRecords();
  const [first] = sequences.slice(-2);
  const seen: string[] = [];
  const result = await replayBatch(
    streams,
    { streamArn, shardId, startSequenceNumber: first!, endSequenceNumber: first! },
    async (records) => {
      for (const r of records) seen.push(String(unmarshall(r.dynamodb!.NewImage as never).name));
      return {};
    },
  );
  expect(result).toEqual({ outcome: "replayed", records: 1 });
  expect(seen).toEqual(["First"]);
});

it("a replay that fails again reports where, so the message stays in the queue", async () => {
  const user = await env.user();
  expect((await user.call("POST", "/clients", { name: "Still failing" })).status).toBe(201);
  const { streamArn, shardId, sequences } = await clientRecords();
  const last = sequences.at(-1)!;
  const result = await replayBatch(
    streams,
    { streamArn, shardId, startSequenceNumber: last, endSequenceNumber: last },
    async () => ({ failedSequenceNumber: last }),
  );
  expect(result).toEqual({ outcome: "failed", records: 0, failedSequenceNumber: last });
});

it("a message that is not a stream batch's failure is recognised as such", () => {
  expect(failedBatchOf("not json")).toBeUndefined();
  expect(failedBatchOf(JSON.stringify({ DDBStreamBatchInfo: { shardId: "s" } }))).toBeUndefined();
});

/** Issue 39 item 4: AWS may answer empty GetRecords pages on an open shard before the records that follow. */
it("empty pages before the range do not end the replay: it reads on until the range's end, then it is done", async () => {
  const user = await env.user();
  for (const name of ["After Empty A", "After Empty B"])
    expect((await user.call("POST", "/clients", { name })).status).toBe(201);
  const { streamArn, shardId, sequences } = await clientRecords();
  const [first, second] = sequences.slice(-2);
  // A stand-in speaking the Streams protocol: the first three GetRecords answer empty pages.
  const proxy = await startFaultProxy(env.endpoint);
  const viaProxy = new DynamoDBStreamsClient({ endpoint: proxy.url, region: "local", credentials });
  try {
    const empty = proxy.inject({ match: (operation) => operation === "GetRecords", fault: "empty-page", times: 3 });
    const seen: string[] = [];
    const result = await replayBatch(
      viaProxy,
      { streamArn, shardId, startSequenceNumber: first!, endSequenceNumber: second! },
      async (records) => {
        for (const r of records) {
          const image = unmarshall(r.dynamodb!.NewImage as never);
          if (String(image.sk).startsWith("CLIENT#")) seen.push(String(image.name));
        }
        return {};
      },
      { timeLimitMs: 60_000, emptyPageWaitMs: 0 },
    );
    expect(empty.hits).toBe(3);
    expect(result.outcome).toBe("replayed");
    expect(seen).toEqual(["After Empty A", "After Empty B"]);
  } finally {
    viaProxy.destroy();
    await proxy.close();
  }
});

it("a range whose end never comes within the time cap is incomplete: the message stays", async () => {
  const user = await env.user();
  expect((await user.call("POST", "/clients", { name: "Never Read" })).status).toBe(201);
  const { streamArn, shardId, sequences } = await clientRecords();
  const last = sequences.at(-1)!;
  const proxy = await startFaultProxy(env.endpoint);
  const viaProxy = new DynamoDBStreamsClient({ endpoint: proxy.url, region: "local", credentials });
  // A clock that moves a second per reading: the cap is reached without waiting for it.
  let clock = 0;
  try {
    proxy.inject({ match: (operation) => operation === "GetRecords", fault: "empty-page", times: Infinity });
    const handled: unknown[] = [];
    const result = await replayBatch(
      viaProxy,
      { streamArn, shardId, startSequenceNumber: last, endSequenceNumber: last },
      async (records) => {
        handled.push(...records);
        return {};
      },
      { timeLimitMs: 10_000, emptyPageWaitMs: 0, now: () => (clock += 1_000), wait: async () => {} },
    );
    expect(result).toEqual({ outcome: "incomplete", records: 0 });
    expect(handled).toEqual([]);
  } finally {
    viaProxy.destroy();
    await proxy.close();
  }
});
