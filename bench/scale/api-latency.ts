import { createApp } from "@invoicing/functions/app/create-app";
import { stageLimits } from "../../infra/limits";
import { request } from "../../test/support/env";
import { createFreshTable } from "../../test/support/table";
import type { Limits } from "./api-limits";
import type { AwsLikeDynamo } from "./aws-like-dynamo";
import { startNoisyUser } from "./noisy-user";
import { setupUser } from "./population";
import { percentile, round, SCALE, simDeps, sleep, Slots, THROTTLED } from "./sim";

/**
 * (iv) A quiet user's API latency, p50 and p99 of `GET /invoices/{id}` at QUIET_PER_SECOND, alone
 * and while a noisy user sends `POST /invoices` at 10× its request limit. Every request holds one
 * of the API function's concurrent executions for as long as it runs (production's reserved 300,
 * scaled down with the user's limit by SCALE.apiDivisor); one that finds none free is throttled
 * (Lambda's answer, a 503 to the client), counted apart and failing the goal. So a noisy user
 * reaches the quiet one through what they share deployed: the function's concurrency and the
 * machine's cores (each user in its own thread and on its own emulator: ./noisy-user.ts).
 */
export const QUIET_PER_SECOND = 20;
/**
 * Quiet users, each at QUIET_PER_SECOND, measured together: enough samples for a steady p99 (with
 * two requests a GET and one DynamoDB request in a hundred 30 ms slower, about 2 % of GETs meet the
 * tail; a phase of a few hundred samples puts its p99 in or out of it by chance).
 */
const QUIET_USERS = 4;
/**
 * The part runs this many times slower than AWS (SCALE_API_SLOWDOWN), as the month start does:
 * every modelled wait this many times longer, every rate and limit (the users' requests, the noisy
 * user's limit, the partitions') this many times lower. Executions in use (rate × duration) are
 * unchanged; what shrinks is the CPU this machine's two cores spend a second — shared here by both
 * users, the proxy and the emulators, while each Lambda has its own — against the modelled waits.
 */
export const API_SLOWDOWN = Number(process.env.SCALE_API_SLOWDOWN ?? 2);
/** Turns of (alone, beside the noisy user), each phase this long. */
const TURNS = 4;
const TURN_MS = 6_000;
/** The quiet user's first requests warm its emulator (a JVM's first requests are slow; AWS's are not). */
const WARM_UP_MS = 3_000;
export const API_CONCURRENCY = stageLimits(true).reservedConcurrency.Api! / SCALE.apiDivisor;

export interface ApiLatencyResult {
  limits: string;
  /** API_SLOWDOWN: every wait this many times AWS's, every rate this many times lower. */
  slowdown: number;
  quietUsers: number;
  /** Each quiet user's GETs a second. */
  quietPerSecond: number;
  concurrency: number;
  noisyPerSecond: number;
  /** What the noisy user's thread managed to send, a second (its own event loop can fall short). */
  noisySentPerSecond: number;
  /** The largest share of a turn the noisy user's thread was busy (near 1: it sent as fast as it could). */
  noisyThreadBusy: number;
  alone: { samples: number; throttled: number; p50Ms: number; p99Ms: number };
  withNoisy: { samples: number; throttled: number; p50Ms: number; p99Ms: number };
  noisyStatuses: Record<string, number>;
  ratio: number;
  met: boolean;
}

export async function measureApiLatency(
  dynamo: AwsLikeDynamo,
  limits: Limits,
  log: (line: string) => void,
): Promise<ApiLatencyResult> {
  // The quiet users here, on the first emulator; the noisy one in a worker thread of its own, on the
  // second (./noisy-user.ts). What they share is the API function's executions: one Slots.
  const { tableName } = await createFreshTable(dynamo.instances[0]!, "scale-api");
  dynamo.place(tableName, dynamo.instances[0]!);
  const deps = simDeps(dynamo.url, tableName, new Date().toISOString(), limits.deps);
  const app = createApp(deps);
  const quiet = await Promise.all(
    Array.from({ length: QUIET_USERS }, async (_, i) => {
      const user = await setupUser(app, deps.db, `quiet${i}`);
      const invoice = await user.call("POST", "/invoices", {
        clientId: user.clientId,
        lineItems: [{ description: "Work", quantity: "1", unitPrice: "10.00" }],
      });
      return { key: user.key, path: `/invoices/${invoice.id}` };
    }),
  );
  const slots = new Slots(API_CONCURRENCY);
  log("  the noisy user's thread: its table, a warm-up of its emulator…");
  const noisy = await startNoisyUser({
    instance: dynamo.instances[1] ?? dynamo.instances[0]!,
    slots: slots.shared,
    limits: limits.name,
    slowdown: API_SLOWDOWN,
  });
  dynamo.setSlowdown(API_SLOWDOWN);
  const get = (user: (typeof quiet)[number]) =>
    slots.run(() => request(app, "GET", user.path, undefined, { Authorization: `Bearer ${user.key}` }));

  /** Every quiet user's GETs at QUIET_PER_SECOND (÷ the slowdown) for `ms`: their latencies. */
  const quietPhase = async (ms: number): Promise<(number | typeof THROTTLED)[]> => {
    const lags: Promise<number | typeof THROTTLED>[] = [];
    const end = performance.now() + ms;
    let turn = 0;
    while (performance.now() < end) {
      const next = performance.now() + (1000 * API_SLOWDOWN) / (QUIET_PER_SECOND * QUIET_USERS);
      const started = performance.now();
      const user = quiet[turn++ % QUIET_USERS]!;
      lags.push(get(user).then((res) => (res === THROTTLED ? THROTTLED : performance.now() - started)));
      await sleep(Math.max(0, next - performance.now()));
    }
    return Promise.all(lags);
  };
  const stats = (all: (number | typeof THROTTLED)[]) => {
    const lags = all.filter((l): l is number => l !== THROTTLED);
    return {
      samples: all.length,
      throttled: all.length - lags.length,
      p50Ms: round(percentile(lags, 50), 1),
      p99Ms: round(percentile(lags, 99), 1),
    };
  };

  try {
    log(
      `  warm-up: ${QUIET_USERS} quiet users at ${QUIET_PER_SECOND / API_SLOWDOWN} GET/s for ${WARM_UP_MS / 1000} s (not counted)…`,
    );
    await quietPhase(WARM_UP_MS);
    const noisyLimit = limits.perSecond / API_SLOWDOWN;
    const noisyPerSecond = 10 * noisyLimit;
    // Alone and beside the noisy user in turns, so both phases meet the same machine (a JVM still
    // warming, another process's burst): each turn the quiet user alone, then the noisy user's load
    // established for a second and the quiet user beside it until the noisy user stops.
    const aloneLags: (number | typeof THROTTLED)[] = [];
    const withLags: (number | typeof THROTTLED)[] = [];
    const noisyStatuses: Record<string, number> = {};
    let noisySent = 0;
    let noisySeconds = 0;
    let noisyBusy = 0;
    for (let turn = 1; turn <= TURNS; turn++) {
      log(
        `  turn ${turn} of ${TURNS}: alone ${TURN_MS / 1000} s, then beside a noisy user at ${noisyPerSecond} POST/s (10× its limit of ${noisyLimit}/s)…`,
      );
      aloneLags.push(...(await quietPhase(TURN_MS)));
      const noisyRun = noisy.run(noisyPerSecond, TURN_MS + 1000);
      await sleep(1000);
      withLags.push(...(await quietPhase(TURN_MS)));
      const sent = await noisyRun;
      for (const [status, n] of Object.entries(sent.statuses)) noisyStatuses[status] = (noisyStatuses[status] ?? 0) + n;
      noisySent += sent.sent;
      noisySeconds += sent.seconds;
      noisyBusy = Math.max(noisyBusy, sent.busy);
    }
    const alone = stats(aloneLags);
    const withNoisy = stats(withLags);
    const ratio = round(withNoisy.p99Ms / alone.p99Ms, 2);
    return {
      limits: limits.describe,
      slowdown: API_SLOWDOWN,
      quietUsers: QUIET_USERS,
      quietPerSecond: QUIET_PER_SECOND / API_SLOWDOWN,
      concurrency: API_CONCURRENCY,
      noisyPerSecond,
      noisySentPerSecond: round(noisySent / noisySeconds, 1),
      noisyThreadBusy: noisyBusy,
      alone,
      withNoisy,
      noisyStatuses,
      ratio,
      met: ratio <= 1.5 && withNoisy.throttled === 0 && alone.throttled === 0,
    };
  } finally {
    dynamo.setSlowdown(1);
    await noisy.stop();
    deps.db.doc.destroy();
  }
}
