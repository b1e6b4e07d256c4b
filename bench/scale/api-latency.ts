import { createApp } from "@invoicing/functions/app/create-app";
import { DEFAULT_API_RATE_LIMIT } from "@invoicing/core/limits/rate-limit";
import { setUserLimits } from "@invoicing/core/limits/user-limits";
import type { Deps } from "@invoicing/core/deps";
import { request } from "../../test/support/env";
import { createFreshTable } from "../../test/support/table";
import type { AwsLikeDynamo } from "./aws-like-dynamo";
import { setupUser } from "./population";
import { percentile, round, SCALE, simDeps, sleep, Slots, THROTTLED } from "./sim";

/**
 * (iv) A quiet user's API latency, p50 and p99 of `GET /invoices/{id}` at QUIET_PER_SECOND, alone
 * and while a noisy user sends `POST /invoices` at 10× its request limit. Every request holds one
 * of the API function's concurrent executions for as long as it runs (the account's 1,000 scaled
 * down by SCALE.concurrencyDivisor); one that finds none free is throttled (Lambda's answer, a 503
 * to the client), counted apart and failing the goal. So a noisy user reaches
 * the quiet one through what they share: the function's concurrency, while the noisy user's own
 * partition throttles its writes and the SDK's retries keep its requests (and their executions) busy.
 */
export const QUIET_PER_SECOND = 20;
const PHASE_MS = 10_000;
export const API_CONCURRENCY = 1000 / SCALE.concurrencyDivisor;

/**
 * How the noisy user's limit is set and what it is: main has no per-user limit, so the figure is a
 * stated assumption there; with per-user limits it is the limit the simulation gives the user.
 */
export interface Limits {
  describe: string;
  /** The noisy user's request limit, per second. */
  perSecond: number;
  /** What the service's dependencies carry for limits (the stage's configuration). */
  deps: Partial<Deps>;
  /** Gives `userId` that limit (a no-op where there are no limits). */
  apply(deps: Deps, userId: string, perSecond: number): Promise<void>;
}

export const noLimits: Limits = {
  describe: "no per-user limit (main before wave4/limits); the noisy user's 'limit' is an assumed 10 requests/s",
  perSecond: 10,
  deps: {},
  apply: async () => {},
};

/**
 * Per-user request limits (limits/rate-limit.ts): the stage's defaults (50/s, public links 10/s), and
 * the noisy user given its own limit of 10/s, as an operator would with `npm run users -- limits`.
 */
export const userLimits: Limits = {
  describe: "per-user limits (limits/rate-limit.ts): defaults 50/s; the noisy user's own limit set to 10/s",
  perSecond: 10,
  deps: { rateLimits: { requestsPerSecond: DEFAULT_API_RATE_LIMIT, publicPerSecond: 10 } },
  apply: async (deps, userId, perSecond) => {
    await setUserLimits(deps, userId, { requestsPerSecond: perSecond });
  },
};

export interface ApiLatencyResult {
  limits: string;
  concurrency: number;
  noisyPerSecond: number;
  alone: { samples: number; throttled: number; p50Ms: number; p99Ms: number };
  withNoisy: { samples: number; throttled: number; p50Ms: number; p99Ms: number };
  noisyStatuses: Record<string, number>;
  ratio: number;
  met: boolean;
}

export async function measureApiLatency(
  endpoint: string,
  dynamo: AwsLikeDynamo,
  limits: Limits,
  log: (line: string) => void,
): Promise<ApiLatencyResult> {
  const { tableName } = await createFreshTable(endpoint, "scale-api");
  const deps = simDeps(dynamo.url, tableName, new Date().toISOString(), limits.deps);
  const app = createApp(deps);
  const quiet = await setupUser(app, deps.db, "quiet");
  const noisy = await setupUser(app, deps.db, "noisy");
  await limits.apply(deps, noisy.userId, limits.perSecond);
  const invoice = await quiet.call("POST", "/invoices", {
    clientId: quiet.clientId,
    lineItems: [{ description: "Work", quantity: "1", unitPrice: "10.00" }],
  });
  const slots = new Slots(API_CONCURRENCY);
  const through = (key: string, method: string, path: string, body?: unknown) =>
    slots.run(() => request(app, method, path, body, { Authorization: `Bearer ${key}` }));

  const quietPhase = async (): Promise<(number | typeof THROTTLED)[]> => {
    const lags: Promise<number | typeof THROTTLED>[] = [];
    const end = performance.now() + PHASE_MS;
    while (performance.now() < end) {
      const next = performance.now() + 1000 / QUIET_PER_SECOND;
      const started = performance.now();
      lags.push(
        through(quiet.key, "GET", `/invoices/${invoice.id}`).then((res) =>
          res === THROTTLED ? THROTTLED : performance.now() - started,
        ),
      );
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

  log(`  alone: ${QUIET_PER_SECOND} GET/s for ${PHASE_MS / 1000} s…`);
  const alone = stats(await quietPhase());
  const noisyPerSecond = 10 * limits.perSecond;
  log(`  with a noisy user at ${noisyPerSecond} POST/s (10× its limit of ${limits.perSecond}/s)…`);
  const noisyStatuses: Record<string, number> = {};
  let noisyOn = true;
  const noisyRun = (async () => {
    const sent: Promise<unknown>[] = [];
    while (noisyOn) {
      const next = performance.now() + 1000 / noisyPerSecond;
      sent.push(
        slots
          .run(async () => {
            const res = await request(
              app,
              "POST",
              "/invoices",
              { clientId: noisy.clientId, lineItems: [{ description: "Noise", quantity: "1", unitPrice: "1.00" }] },
              { Authorization: `Bearer ${noisy.key}` },
            );
            return String(res.status);
          })
          .then((result) => {
            const status = result === THROTTLED ? "throttled" : result;
            noisyStatuses[status] = (noisyStatuses[status] ?? 0) + 1;
          }),
      );
      await sleep(Math.max(0, next - performance.now()));
    }
    await Promise.all(sent);
  })();
  await sleep(1000); // the noisy user's load established
  // The noisy user stops when the quiet user's last request is sent.
  const stopNoisy = setTimeout(() => {
    noisyOn = false;
  }, PHASE_MS);
  const withNoisy = stats(await quietPhase());
  clearTimeout(stopNoisy);
  noisyOn = false;
  await noisyRun;
  deps.db.doc.destroy();
  const ratio = round(withNoisy.p99Ms / alone.p99Ms, 2);
  return {
    limits: limits.describe,
    concurrency: API_CONCURRENCY,
    noisyPerSecond,
    alone,
    withNoisy,
    noisyStatuses,
    ratio,
    met: ratio <= 1.5 && withNoisy.throttled === 0 && alone.throttled === 0,
  };
}
