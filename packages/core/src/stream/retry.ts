/**
 * How often a stream record that keeps failing is retried before it is given up on, deployed and
 * locally alike: infra/stream.ts gives it to the event source mapping (`maximumRetryAttempts`),
 * packages/local/src/stream-reader.ts to `npm start`'s reader. Then the record goes to a failure
 * list (the StreamFailures queue; locally DATA_DIR/stream-failures.jsonl) that
 * `npm run jobs -- replay-stream-failures` reads, and its shard moves on.
 */
export const STREAM_MAX_RETRY_ATTEMPTS = 5;
