import type { Deps } from "@invoicing/core/deps";
import { createDb } from "@invoicing/core/db/dynamodb";
import type { DeliveryReceipt, EmailMessage, EmailTransport } from "@invoicing/core/capabilities/email-transport";
import { attachmentsFor } from "@invoicing/core/public/attachments";

/**
 * What the scale simulation stands in for AWS's other services with, and small tools it shares.
 * Every stand-in is stated here with its figure, so the printed results can be read against it.
 */

/** The simulation's figures against AWS's, each scaled down as stated (docs/scale.md). */
export const SCALE = {
  /**
   * DynamoDB's per-partition limits (1,000 WCU, 3,000 RCU per second) divided by this: 1, AWS's
   * own. A simulated worker waits what a Lambda waits (the latencies below), so it puts on a user's
   * partition the load it would on AWS; smaller limits would throttle a large user's month start
   * sooner than AWS does. What the simulation scales down is the population, not a user.
   */
  partitionDivisor: 1,
  /**
   * SES's sending rate (the account's, 200 messages/s once raised, as docs/scale.md says to ask
   * before the first large month) divided by this: 1. An outbox worker sends about 15 emails a second
   * (a few DynamoDB requests, SES's 25 ms, the PDF), so 200 a second is reached by ~13 workers, past
   * the 8 the month start measures. An earlier ÷ 4 made SES's rate the drain's floor from 3.3
   * workers on: the 4-worker figure measured SES, not the workers.
   */
  sesDivisor: 1,
  /**
   * The API function's reserved concurrency (production's 300, infra/limits.ts) and a user's request
   * limit (50 a second by default) divided alike by this: a user's burst (twice its limit) is then
   * the same share of the API's executions as deployed, a third.
   */
  apiDivisor: 5,
} as const;

export const PARTITION_LIMITS = {
  readUnitsPerSecond: 3000 / SCALE.partitionDivisor,
  writeUnitsPerSecond: 1000 / SCALE.partitionDivisor,
  burstSeconds: 1,
};

/**
 * DynamoDB from a Lambda in its region, the SDK's own time included: 5–10 ms a request (4 ms plus
 * an exponential part of mean 3 ms), one request in a hundred 30 ms later; a transaction twice that.
 * These waits, not this machine's CPU, must make most of a simulated worker's time, as they make a
 * Lambda's: the CPU each figure used is printed beside it (./cpu.ts).
 */
export const DYNAMO_LATENCY = { baseMs: 4, meanExtraMs: 3, tailShare: 0.01, tailMs: 30 };

/** SES SendRawEmail: ~25 ms, at most `perSecond` messages a second for the whole account. */
export const SES = { latencyMs: 25, perSecond: 200 / SCALE.sesDivisor };

/**
 * The PDF attached to an email. On AWS each worker draws it on its own CPU; here every worker of
 * the simulation shares two cores with DynamoDB Local, so a wait of this long stands in for the
 * drawing (about the bench's render time of a one-page invoice).
 */
export const PDF_DRAW_MS = 40;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** An SES-like transport: its latency, its account-wide rate, and a record of what it sent when. */
export class SimulatedSes implements EmailTransport {
  readonly kind = "ses" as const;
  readonly sent: { message: EmailMessage; at: number }[] = [];
  private nextSlot = 0;
  /** `slowdown`: the simulation's pace against AWS's (1: AWS's; 3: each wait 3× longer, the rate ÷ 3). */
  constructor(private readonly slowdown = 1) {}
  async deliver(message: EmailMessage): Promise<DeliveryReceipt> {
    // One message per 1/perSecond s, in the order they come (SES's MaxSendRate, as a queue).
    const now = performance.now();
    const slot = Math.max(now, this.nextSlot);
    this.nextSlot = slot + (1000 / SES.perSecond) * this.slowdown;
    await sleep(slot - now + SES.latencyMs * this.slowdown);
    this.sent.push({ message, at: performance.now() });
    return { providerMessageId: message.id };
  }
}

/**
 * The dependencies the simulated functions run with: the table through the AWS-like proxy, a clock
 * that starts at `start` and moves with the wall clock, the simulated SES and PDF drawing.
 */
export function simDeps(
  proxyUrl: string,
  tableName: string,
  start: string,
  extra: Partial<Deps> = {},
  slowdown = 1,
): Deps {
  const origin = performance.now();
  const at = Date.parse(start);
  return {
    db: createDb({ tableName, dynamoEndpoint: proxyUrl, region: "local" }, { requestTimeoutMs: 10_000 }),
    clock: () => new Date(at + (performance.now() - origin)),
    publicBaseUrl: "http://localhost:3000",
    outbox: new SimulatedSes(slowdown),
    renderPdf: async () => {
      await sleep(PDF_DRAW_MS * slowdown);
      return new Uint8Array([0x25, 0x50, 0x44, 0x46]);
    },
    // The attachment is drawn as deployed (its document read, its view made), the drawing above.
    emailAttachments: attachmentsFor,
    webhookPolicy: { allowPrivate: true },
    ...extra,
  };
}

/** The p-th percentile (0–100) of `values`, nearest rank; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export const round = (n: number, digits = 0) => Math.round(n * 10 ** digits) / 10 ** digits;

/**
 * A function's concurrency: at most `limit` invocations at once. One that finds none free is
 * throttled at once, as Lambda answers a synchronous invocation past its concurrency (API Gateway
 * then answers the client 503): `run` resolves to THROTTLED without running the work.
 */
export const THROTTLED = Symbol("throttled");

export class Slots {
  /**
   * The free executions, in memory another thread may share: a worker thread's requests (the noisy
   * user's, ./noisy-user.ts) hold executions of the same function as this thread's.
   */
  private readonly free: Int32Array;
  constructor(limit: number, shared?: SharedArrayBuffer) {
    this.free = new Int32Array(shared ?? new SharedArrayBuffer(4));
    if (!shared) Atomics.store(this.free, 0, limit);
  }
  /** What another thread passes to `new Slots(_, shared)` to share these executions. */
  get shared(): SharedArrayBuffer {
    return this.free.buffer as SharedArrayBuffer;
  }
  async run<T>(work: () => Promise<T>): Promise<T | typeof THROTTLED> {
    if (Atomics.sub(this.free, 0, 1) <= 0) {
      Atomics.add(this.free, 0, 1);
      return THROTTLED;
    }
    try {
      return await work();
    } finally {
      Atomics.add(this.free, 0, 1);
    }
  }
}
