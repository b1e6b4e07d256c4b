import type { Deps } from "@invoicing/core/deps";
import { batches, inTurns } from "@invoicing/core/queue/dispatch";
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

/** A message and the dependencies of the dispatcher that sent it (its table): it is worked with them. */
interface Sent {
  deps: Deps;
  message: WorkMessage;
  userId: string;
}

interface Batch {
  queue: QueueName;
  messages: readonly Sent[];
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
  /** Messages being worked, and given back and waiting for their visibility timeout, per queue. */
  private readonly runningMessages = new Map<QueueName, number>();
  private readonly retryingMessages = new Map<QueueName, number>();
  /** While held (hold … release), what the dispatchers send, in the order they sent it. */
  private held: { queue: QueueName; messages: Sent[] }[] | undefined;

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
          const sent = messages.map((message) => ({ deps: attached, message, userId: message.userId }));
          if (this.held) this.held.push({ queue, messages: sent });
          else this.push({ queue, messages: sent, receives: 0 });
        },
        // SQS's approximate counts: waiting, in flight and given back (queue/sqs.ts).
        backlog: async (queue) => this.backlogOf(queue),
      },
    };
    return attached;
  }

  /**
   * Keeps what is sent from now on until release(): the dispatchers of several tables run at once,
   * and each table's batches would otherwise reach the queue in whatever order the dispatchers
   * happened to finish, the whole of one table's before the other's.
   */
  hold(): void {
    this.held = [];
  }

  /**
   * Sends what was held as the ONE deployed dispatcher, which reads every user at once, would have
   * sent it (queue/dispatch.ts): every table's messages of a queue in turns across all users, in
   * batches of BATCH_SIZE. A batch may hold messages of several tables; its worker invocation works
   * them in order, each table's run of them with that table's dependencies.
   */
  release(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const queue of new Set(held.map((h) => h.queue))) {
      const messages = held.filter((h) => h.queue === queue).flatMap((h) => h.messages);
      for (const batch of batches(inTurns(messages))) this.push({ queue, messages: batch, receives: 0 });
    }
  }

  /** The messages `queue` holds: waiting, being worked, waiting to come again. */
  backlogOf(queue: QueueName): number {
    const waiting = (this.waiting.get(queue) ?? []).reduce((n, batch) => n + batch.messages.length, 0);
    return waiting + (this.runningMessages.get(queue) ?? 0) + (this.retryingMessages.get(queue) ?? 0);
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
      this.add(this.runningMessages, queue, batch.messages.length);
      void this.work(queue, batch.messages)
        .then((retry) => {
          if (retry.length > 0) this.retry({ ...batch, messages: retry, receives: batch.receives + 1 });
        })
        .finally(() => {
          this.add(this.runningMessages, queue, -batch.messages.length);
          this.running.set(queue, (this.running.get(queue) ?? 1) - 1);
          this.pump(queue);
          if (this.isIdle()) for (const resolve of this.idle.splice(0)) resolve();
        });
    }
  }

  /** One worker invocation: each run of one table's messages, in order; what is to come again. */
  private async work(queue: QueueName, messages: readonly Sent[]): Promise<Sent[]> {
    const retry: Sent[] = [];
    for (let start = 0; start < messages.length; ) {
      const deps = messages[start]!.deps;
      let end = start;
      while (end < messages.length && messages[end]!.deps === deps) end++;
      const run = messages.slice(start, end);
      start = end;
      const result = await this.workers[queue]!(
        deps,
        run.map((m) => m.message),
      ).catch(() => ({ tally: {}, retry: run.map((m) => m.message) }));
      addTally(this.outcomes, result.tally);
      retry.push(...result.retry.map((message) => ({ deps, message, userId: message.userId })));
    }
    return retry;
  }

  private retry(batch: Batch): void {
    if (batch.receives >= MAX_RECEIVES) {
      this.counts.deadLettered += batch.messages.length;
      return;
    }
    this.pendingRetries++;
    this.add(this.retryingMessages, batch.queue, batch.messages.length);
    void sleep(VISIBILITY_MS).then(() => {
      this.pendingRetries--;
      this.add(this.retryingMessages, batch.queue, -batch.messages.length);
      this.push(batch);
    });
  }

  private add(counts: Map<QueueName, number>, queue: QueueName, n: number): void {
    counts.set(queue, (counts.get(queue) ?? 0) + n);
  }
}
