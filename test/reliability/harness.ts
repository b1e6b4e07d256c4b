import { QueryCommand, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { vi } from "vitest";
import type { Deps } from "@invoicing/core/deps";
import { createDb, type Db } from "@invoicing/core/db/dynamodb";
import { userPk } from "@invoicing/core/db/keys";
import { createApp } from "@invoicing/functions/app/create-app";
import { FAULT_KINDS, startFaultProxy, type FaultKind, type FaultProxy } from "../support/fault-proxy";
import { IN_CI } from "../support/ci";
import { createTestEnv, request, type TestEnv, type TestResponse, type TestUser } from "../support/env";

/**
 * Shared by the reliability tests (test helper, not a test file).
 *
 * RELIABILITY_RUNS sizes every heavy test of this suite at once: property runs of the model and
 * fuzz tests, operations of the chaos run, requests of the shutdown load. The default keeps the
 * suite to a minute or two on two cores; e.g. RELIABILITY_RUNS=500 for a long soak.
 */
export const RUNS = Math.max(1, Number(process.env.RELIABILITY_RUNS ?? 20) || 20);

/**
 * Random requests per endpoint in fuzz.test.ts. 10 by default, a quick local run; 30 under CI,
 * about 2,000 requests over the ~66 endpoints (about 2.5 minutes of one of CI's two cores), so that
 * the mutations of each endpoint's body and headers are each drawn several times. RELIABILITY_RUNS,
 * when set, decides (half of it, at least 5).
 */
export const FUZZ_RUNS = process.env.RELIABILITY_RUNS ? Math.max(5, Math.ceil(RUNS / 2)) : IN_CI ? 30 : 10;

/** A test env whose app reaches DynamoDB Local through the fault proxy. */
export interface FaultyEnv {
  env: TestEnv;
  proxy: FaultProxy;
  /** The app over the proxied client (env.app stays direct, for set-up and checks). */
  app: ReturnType<typeof createApp>;
  db: Db;
  /** `user` calling the faulty app. */
  as(user: TestUser): TestUser;
  close(): Promise<void>;
}

/**
 * The SDK's per-attempt timeout in fault tests. Every withheld response (`timeout-after-write`)
 * costs it once, but tests count the proxy's hits exactly (a lost write is resent once: 2 hits), and
 * an answer that merely comes late on a loaded machine must not be taken for a withheld one: 1.5 s
 * did trip on two busy cores. 5 s is far above DynamoDB Local's slowest answer under the suite's load.
 */
export const FAULT_REQUEST_TIMEOUT_MS = 5_000;

/**
 * `silenceWarnings`: every 503 logs a warning with the SDK error (by design); a test that causes
 * them by the dozen silences console.warn for its file rather than bury its own output.
 */
export async function createFaultyEnv(
  options: { now?: string; extraDeps?: Partial<Deps>; silenceWarnings?: boolean } = {},
): Promise<FaultyEnv> {
  if (options.silenceWarnings) vi.spyOn(console, "warn").mockImplementation(() => undefined);
  const env = await createTestEnv({ now: options.now, extraDeps: options.extraDeps });
  const proxy = await startFaultProxy(env.endpoint);
  const db = createDb(
    { tableName: env.tableName, dynamoEndpoint: proxy.url, region: "local" },
    { requestTimeoutMs: FAULT_REQUEST_TIMEOUT_MS },
  );
  const app = createApp({ ...env.deps, db });
  return {
    env,
    proxy,
    app,
    db,
    as: (user) => ({
      ...user,
      call: (method, path, body, headers = {}) =>
        request(app, method, path, body, { Authorization: `Bearer ${user.key}`, ...headers }),
    }),
    close: async () => {
      db.doc.destroy();
      await proxy.close();
    },
  };
}

/** Every item of a user's partition (records, counters, idempotency records), sorted by key. */
export async function partition(db: Db, userId: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db.doc.send(
      new QueryCommand({
        TableName: db.table,
        KeyConditionExpression: "pk = :pk",
        ExpressionAttributeValues: { ":pk": userPk(userId) },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items.sort((a, b) => String(a.sk).localeCompare(String(b.sk)));
}

/** The whole table, every item of every user. */
export async function scanTable(db: Db): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db.doc.send(
      new ScanCommand({ TableName: db.table, ConsistentRead: true, ExclusiveStartKey: start }),
    );
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

/** Asserts RFC 9457 problem details with the response's own status; returns the problem code. */
export function problemShape(res: TestResponse): string {
  const type = res.headers.get("content-type") ?? "";
  const where = `${res.status} ${res.text.slice(0, 300)}`;
  if (!type.startsWith("application/problem+json")) throw new Error(`not problem+json (${type}): ${where}`);
  const body = res.body as Record<string, unknown> | undefined;
  if (!body || typeof body !== "object") throw new Error(`no JSON body: ${where}`);
  for (const field of ["type", "title", "detail", "code"]) {
    if (typeof body[field] !== "string") throw new Error(`problem without ${field}: ${where}`);
  }
  if (body.status !== res.status)
    throw new Error(`problem status ${String(body.status)} differs from HTTP ${res.status}`);
  if (!/^[a-z]+(_[a-z]+)*$/.test(body.code as string)) throw new Error(`code not snake_case: ${where}`);
  if (body.code === "validation_error" && !Array.isArray(body.errors))
    throw new Error(`validation_error without errors[]: ${where}`);
  if (/\bat .+:\d+:\d+\)?/.test(res.text) || /Exception|DynamoDB|ConditionExpression/.test(res.text)) {
    throw new Error(`internal details in a problem: ${where}`);
  }
  return body.code as string;
}

/** A small seeded generator, so a failing run's faults come back with fast-check's seed. */
export function prng(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

/**
 * Faults aimed where they hurt: one write in four (each kind, lost responses most: they make the
 * SDK resend a write that already happened), one read in twelve (throttling and 500s). A lost
 * response costs a timeout, so `timeout-after-write` is rarer than the cheaper connection reset.
 * Transaction conflicts only hit transactions, as in DynamoDB.
 */
export function chaos(random: () => number): (operation: string) => FaultKind | undefined {
  const bag = (weights: Partial<Record<FaultKind, number>>) =>
    FAULT_KINDS.flatMap((kind) => Array<FaultKind>(weights[kind] ?? 0).fill(kind));
  const writes = bag({
    throttle: 2,
    provisioned: 1,
    "server-error": 2,
    conflict: 2,
    "timeout-after-write": 1,
    "reset-after-write": 5,
  });
  const reads = bag({ throttle: 2, provisioned: 1, "server-error": 2 });
  return (operation) => {
    const write = ["PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems"].includes(operation);
    if (random() >= (write ? 1 / 4 : 1 / 12)) return undefined;
    const from = write ? writes : reads;
    const kind = from[Math.floor(random() * from.length)]!;
    return kind === "conflict" && operation !== "TransactWriteItems" ? "throttle" : kind;
  };
}
