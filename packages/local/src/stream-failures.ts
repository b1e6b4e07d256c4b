import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dataDir } from "./paths";

/**
 * `npm start`'s failure list: the local counterpart of the StreamFailures queue. When the local
 * stream reader gives up on a record (packages/local/src/stream-reader.ts, after
 * STREAM_MAX_RETRY_ATTEMPTS retries), it appends one line here, in the shape of the message Lambda
 * sends the queue (`DDBStreamBatchInfo`: stream, shard, first and last sequence number), so
 * `npm run jobs -- replay-stream-failures` replays it the same way (packages/local/src/stream-replay.ts).
 */
export const localFailureFile = (): string => join(dataDir(), "stream-failures.jsonl");

export interface GivenUpRecord {
  streamArn: string;
  shardId: string;
  sequenceNumber: string;
  /** The error's name and message, if the handler said (never a record's content). */
  reason?: string;
}

/** The line for one record given up on: Lambda's on-failure message for a one-record batch. */
export function failureMessage(record: GivenUpRecord, at: Date = new Date()): string {
  return JSON.stringify({
    requestContext: { condition: "RetryAttemptsExhausted", functionArn: "local:npm-start" },
    timestamp: at.toISOString(),
    ...(record.reason ? { reason: record.reason } : {}),
    DDBStreamBatchInfo: {
      streamArn: record.streamArn,
      shardId: record.shardId,
      startSequenceNumber: record.sequenceNumber,
      endSequenceNumber: record.sequenceNumber,
      batchSize: 1,
    },
  });
}

export function appendLocalFailure(file: string, record: GivenUpRecord): void {
  appendFileSync(file, `${failureMessage(record)}\n`);
}

/** The list's messages, in order. */
export function readLocalFailures(file: string): string[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "");
}

/** Rewrites the list with what stays (the replay removes what went through). */
export function writeLocalFailures(file: string, messages: string[]): void {
  writeFileSync(file, messages.map((m) => `${m}\n`).join(""));
}
