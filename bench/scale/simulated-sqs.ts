import type { Deps } from "@invoicing/core/deps";
import { addTally, type QueueName, type WorkMessage, type Worker } from "@invoicing/core/queue/port";
import { sleep } from "./sim";

/**
 * The deployed work queues as the simulation runs them: the `workQueue` port (queue/port.ts) served
 * like SQS with a Lambda event source mapping — batches as they were sent, at most `concurrency(queue)`
 * worker invocations of a queue at once, a partial batch response's messages given again after the
 * visibility timeout, and to the dead-letter queue after `maxReceives`. The workers are the real
 * ones (each queue's worker in core), run with the simulation's dependencies.
 */
export const VISIBILITY_MS = 2_000;
const MAX_RECEIVES = 3;

interface Batch {
  /** The dependencies of the dispatcher that sent it (its table): its worker runs with them. */
  deps: Deps;
  queue: QueueName;
  messages: readonly WorkMessage[];
  receives: number;
}

export class SimulatedSqs {
  /** Messages handed to workers so far, and those that ended in a dead-letter queue. */
  readonly counts = { delivered: 0, deadLettered: 0 };
  /** What the workers did with the messages, by outcome (their tallies added up). */
  readonly outcomes: Record<string, number> = {};
  private readonly waiting = new Map<QueueName, Batch[]>();
  private readonly running = new Map<QueueName, number>();
  private pendingRetries = 0;
  private idle: (() => void)[] = [];

  constructor(
    private readonly workers: Partial<Record<QueueName, Worker>>,
    private readonly concurrency: (queue: QueueName) => number,
  ) {}

  /**
   * The caller's dependencies with this queue as their work queue: what they send is worked with
   * them. Several may be attached (one per table, when the population is spread over emulator
   * instances); they share the workers, whose concurrency is per queue, as deployed.
   */
  attach(deps: Deps): Deps {
    const attached: Deps = {
      ...deps,
      workQueue: {
        send: async (queue, messages) => {
          if (!this.workers[queue]) throw new Error(`no worker for queue ${queue}`);
          this.push({ deps: attached, queue, messages, receives: 0 });
        },
      },
    };
    return attached;
  }

  /** Resolves once no message waits, runs or waits for its visibility timeout. */
  settled(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private push(batch: Batch): void {
    const lane = this.waiting.get(batch.queue) ?? [];
    lane.push(batch);
    this.waiting.set(batch.queue, lane);
    this.pump(batch.queue);
  }

  private isIdle(): boolean {
    if (this.pendingRetries > 0) return false;
    for (const n of this.running.values()) if (n > 0) return false;
    for (const lane of this.waiting.values()) if (lane.length > 0) return false;
    return true;
  }

  private pump(queue: QueueName): void {
    const lane = this.waiting.get(queue) ?? [];
    while ((this.running.get(queue) ?? 0) < this.concurrency(queue) && lane.length > 0) {
      const batch = lane.shift()!;
      this.running.set(queue, (this.running.get(queue) ?? 0) + 1);
      this.counts.delivered += batch.messages.length;
      void this.workers[queue]!(batch.deps, batch.messages)
        .catch(() => ({ tally: {}, retry: [...batch.messages] }))
        .then((result) => {
          addTally(this.outcomes, result.tally);
          if (result.retry.length > 0) this.retry({ ...batch, messages: result.retry, receives: batch.receives + 1 });
        })
        .finally(() => {
          this.running.set(queue, (this.running.get(queue) ?? 1) - 1);
          this.pump(queue);
          if (this.isIdle()) for (const resolve of this.idle.splice(0)) resolve();
        });
    }
  }

  private retry(batch: Batch): void {
    if (batch.receives >= MAX_RECEIVES) {
      this.counts.deadLettered += batch.messages.length;
      return;
    }
    this.pendingRetries++;
    void sleep(VISIBILITY_MS).then(() => {
      this.pendingRetries--;
      this.push(batch);
    });
  }
}
