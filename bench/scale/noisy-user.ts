import { performance } from "node:perf_hooks";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { createApp } from "@invoicing/functions/app/create-app";
import { request } from "../../test/support/env";
import { createFreshTable } from "../../test/support/table";
import { type Limits, limitsNamed } from "./api-limits";
import { startAwsLikeDynamo } from "./aws-like-dynamo";
import { setupUser } from "./population";
import { DYNAMO_LATENCY, PARTITION_LIMITS, simDeps, sleep, Slots, THROTTLED } from "./sim";

/**
 * The noisy user of the API latency part (./api-latency.ts), in a worker thread of its own: its
 * requests run on their own event loop, as on AWS each request runs in its own Lambda execution
 * with its own CPU, so the CPU they take does not queue the quiet user's requests in one JavaScript
 * thread — what they share is what deployed requests share: the API function's concurrent
 * executions (the Slots, in shared memory) and the machine's cores. Its table is on its own
 * emulator instance behind its own AWS-like proxy (docs/scale.md, "Emulator instances").
 *
 * Before it answers ready, it warms its emulator with another user's creates (a JVM's first
 * requests are several times slower than its later ones; DynamoDB has no such start).
 */
interface Setup {
  instance: string;
  slots: SharedArrayBuffer;
  limits: Limits["name"];
  /** The part's pace against AWS's (./api-latency.ts API_SLOWDOWN): the user's limit ÷ it. */
  slowdown: number;
}

interface Sent {
  statuses: Record<string, number>;
  sent: number;
  seconds: number;
  /** The share of the time its thread's event loop was busy (1: it could not send faster). */
  busy: number;
}

export interface NoisyUser {
  /** Sends `POST /invoices` at `perSecond` for `ms` through the shared executions; what it got. */
  run(perSecond: number, ms: number): Promise<Sent>;
  stop(): Promise<void>;
}

const WARM_UP_CREATES = 150;

export async function startNoisyUser(setup: Setup): Promise<NoisyUser> {
  // The worker runs this file's TypeScript through tsx, as the bench's main thread does.
  const worker = new Worker(
    `import { register } from "tsx/esm/api"; register(); await import(${JSON.stringify(import.meta.url)});`,
    { eval: true, workerData: setup },
  );
  const next = () =>
    new Promise<unknown>((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
    });
  await next(); // ready
  return {
    async run(perSecond, ms) {
      const answer = next();
      worker.postMessage({ perSecond, ms });
      return (await answer) as Sent;
    },
    async stop() {
      await worker.terminate();
    },
  };
}

async function serve(setup: Setup): Promise<void> {
  // The service's JSON log lines are not the bench's output.
  for (const name of ["log", "warn", "info"] as const) console[name] = () => {};
  const limits = limitsNamed(setup.limits);
  const dynamo = await startAwsLikeDynamo([setup.instance], PARTITION_LIMITS, DYNAMO_LATENCY);
  const { tableName } = await createFreshTable(setup.instance, "scale-api-noisy");
  const deps = simDeps(dynamo.url, tableName, new Date().toISOString(), limits.deps);
  const app = createApp(deps);
  const slots = new Slots(0, setup.slots);
  const warm = await setupUser(app, deps.db, "warm");
  for (let i = 0; i < WARM_UP_CREATES; i++)
    await warm.call("POST", "/invoices", {
      clientId: warm.clientId,
      lineItems: [{ description: "Warm", unitPrice: "1.00" }],
    });
  const noisy = await setupUser(app, deps.db, "noisy");
  await limits.apply(deps, noisy.userId, limits.perSecond);
  parentPort!.postMessage("ready");
  parentPort!.on("message", async ({ perSecond, ms }: { perSecond: number; ms: number }) => {
    const statuses: Record<string, number> = {};
    const sent: Promise<void>[] = [];
    const started = performance.now();
    const loop = performance.eventLoopUtilization();
    // Paced by the clock, not by each send: a late timer is caught up, as a client's load would be.
    let due = started;
    while (performance.now() - started < ms) {
      for (; due <= performance.now(); due += 1000 / perSecond) {
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
              statuses[status] = (statuses[status] ?? 0) + 1;
            }),
        );
      }
      await sleep(Math.max(0, due - performance.now()));
    }
    const seconds = (performance.now() - started) / 1000;
    await Promise.all(sent);
    const busy = Math.round(performance.eventLoopUtilization(loop).utilization * 100) / 100;
    parentPort!.postMessage({ statuses, sent: sent.length, seconds, busy } satisfies Sent);
  });
}

if (!isMainThread && (workerData as Setup | undefined)?.instance) await serve(workerData as Setup);
