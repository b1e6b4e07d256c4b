import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { afterAll, beforeAll, expect, it } from "vitest";
import { STREAM_MAX_RETRY_ATTEMPTS } from "@invoicing/core/stream/retry";
import { handleStreamBatch, type StreamRecord } from "@invoicing/core/stream/subscriber";
import { appendLocalFailure, readLocalFailures } from "@invoicing/local/stream-failures";
import { createStreamReader } from "@invoicing/local/stream-reader";
import { replayLocalFailures } from "@invoicing/local/stream-replay";
import { ok } from "../invoices/fixtures";
import { createTestEnv, type TestEnv } from "../support/env";

/**
 * Issue 42 item 5: a record that keeps failing no longer holds its shard for ever under `npm start`.
 * The local reader retries it as often as the deployed mapping does (STREAM_MAX_RETRY_ATTEMPTS, the
 * same constant infra gives the mapping), then lists it in the local failure list and reads on; the
 * replay command (`npm run jobs -- replay-stream-failures`, here its function) replays the list from
 * DynamoDB Local's stream and empties it.
 */
let env: TestEnv;
let dir: string;

beforeAll(async () => {
  env = await createTestEnv();
  dir = mkdtempSync(join(tmpdir(), "stream-poison-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const clientName = (record: StreamRecord): string | undefined => {
  const image = record.dynamodb?.NewImage ? unmarshall(record.dynamodb.NewImage as never) : undefined;
  return image && String(image.sk).startsWith("CLIENT#") ? String(image.name) : undefined;
};

it("a poison record is retried the deployed number of times, listed, and the shard moves on; the replay handles it", async () => {
  const user = await env.user();
  const file = join(dir, "stream-failures.jsonl");
  // The subscriber, except that the record of client "Poison" fails every time (as a bug would).
  let poisonAttempts = 0;
  const handle = async (records: StreamRecord[]) => {
    const poison = records.find((r) => clientName(r) === "Poison");
    if (!poison) return handleStreamBatch(env.deps, records);
    poisonAttempts++;
    const before = records.slice(0, records.indexOf(poison));
    if (before.length > 0) await handleStreamBatch(env.deps, before);
    return { failedSequenceNumber: poison.dynamodb!.SequenceNumber! };
  };
  const reader = createStreamReader(env.deps, {
    endpoint: env.endpoint,
    tableName: env.tableName,
    handle,
    onGiveUp: (record) => appendLocalFailure(file, record),
  });
  try {
    ok(await user.call("POST", "/clients", { name: "Poison" }), 201);
    ok(await user.call("POST", "/clients", { name: "Behind It" }), 201);
    const names = async () =>
      (ok(await user.call("GET", "/events")).body as { type: string; data: { name?: string } }[])
        .filter((e) => e.type === "client.created")
        .map((e) => e.data.name)
        .sort();

    // Each drain is one attempt at the poison record: the first and its retries hold the shard.
    for (let attempt = 1; attempt <= STREAM_MAX_RETRY_ATTEMPTS; attempt++) {
      await reader.drain();
      expect(await names(), `attempt ${attempt}`).not.toContain("Behind It");
    }
    expect(readLocalFailures(file)).toEqual([]);
    // The last retry fails too: the record is listed and the change behind it goes through.
    await reader.drain();
    expect(poisonAttempts).toBe(1 + STREAM_MAX_RETRY_ATTEMPTS);
    expect(await names()).toEqual(["Behind It"]);
    const listed = readLocalFailures(file);
    expect(listed).toHaveLength(1);
    expect(JSON.parse(listed[0]!).DDBStreamBatchInfo).toMatchObject({ batchSize: 1 });
    // Not tried again by the reader.
    await reader.drain();
    expect(poisonAttempts).toBe(1 + STREAM_MAX_RETRY_ATTEMPTS);

    // Fixed (the real subscriber), the replay makes its event and empties the list.
    const results = await replayLocalFailures(env.deps, {
      file,
      streamsEndpoint: env.endpoint,
      limits: { timeLimitMs: 60_000, emptyPageWaitMs: 0 },
    });
    expect(results.map((r) => r.result.outcome)).toEqual(["replayed"]);
    expect(await names()).toEqual(["Behind It", "Poison"]);
    expect(readLocalFailures(file)).toEqual([]);
  } finally {
    reader.close();
  }
});
