import type { Deps } from "../deps";
import { errorName, log } from "../observability/context-log";
import {
  addTally,
  emptyResult,
  WORKER_CONCURRENCY,
  type QueueName,
  type WorkerResult,
  type WorkMessage,
  type Worker,
} from "./port";

/**
 * The work queues served in process (npm start, npm run jobs, the tests): the same messages the
 * deployed SQS queues carry, handed to the same workers, WORKER_CONCURRENCY batches of a queue at a
 * time, first in first out — so the local service behaves as the deployed one does, without AWS.
 * One set of queues per dependencies object: the local server's, a job run's, a test's stream
 * reader's each wait only for their own work.
 *
 * Unlike SQS it keeps nothing: a process that stops loses what it held, which the due lists make up
 * for (every message names records that stay due until their worker has done them).
 */
interface Pending {
  messages: readonly WorkMessage[];
  worker: Worker;
  deps: Deps;
  resolve: (result: WorkerResult) => void;
}

interface Lane {
  waiting: Pending[];
  running: number;
}

class InProcessQueues {
  private readonly lanes = new Map<QueueName, Lane>();
  private idle: (() => void)[] = [];

  send(deps: Deps, queue: QueueName, messages: readonly WorkMessage[], worker: Worker): Promise<WorkerResult> {
    return new Promise((resolve) => {
      let lane = this.lanes.get(queue);
      if (!lane) this.lanes.set(queue, (lane = { waiting: [], running: 0 }));
      lane.waiting.push({ messages, worker, deps, resolve });
      this.pump(queue, lane);
    });
  }

  /** Resolves once nothing is waiting or running in any queue. */
  settled(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private isIdle(): boolean {
    for (const lane of this.lanes.values()) if (lane.running > 0 || lane.waiting.length > 0) return false;
    return true;
  }

  private pump(queue: QueueName, lane: Lane): void {
    while (lane.running < WORKER_CONCURRENCY[queue] && lane.waiting.length > 0) {
      const next = lane.waiting.shift()!;
      lane.running++;
      next
        .worker(next.deps, next.messages)
        .catch((error: unknown) => {
          // A worker that throws gives its whole batch back, as an SQS worker's failed invocation does;
          // here nothing redelivers it, and its records stay due for the next run.
          log("warn", "in-process worker failed", { queue, error: errorName(error) });
          return { ...emptyResult(), retry: [...next.messages] };
        })
        .then((result) => {
          lane.running--;
          next.resolve(result);
          this.pump(queue, lane);
          if (this.isIdle()) for (const resolve of this.idle.splice(0)) resolve();
        });
    }
  }
}

const byDeps = new WeakMap<Deps, InProcessQueues>();

function queuesOf(deps: Deps): InProcessQueues {
  let queues = byDeps.get(deps);
  if (!queues) byDeps.set(deps, (queues = new InProcessQueues()));
  return queues;
}

/**
 * Hands `messages` to `worker` through the queue: deployed (deps.workQueue) they are sent to SQS and
 * this resolves with nothing (the queue's Lambda worker does them later); in process it resolves
 * with what the worker did, once it did. The caller that must not wait for the work (the stream
 * subscriber) does not await it.
 */
export async function handOff(
  deps: Deps,
  queue: QueueName,
  messages: readonly WorkMessage[],
  worker: Worker,
): Promise<WorkerResult | undefined> {
  if (messages.length === 0) return emptyResult();
  if (deps.workQueue) {
    await deps.workQueue.send(queue, messages);
    return undefined;
  }
  return queuesOf(deps).send(deps, queue, messages, worker);
}

/**
 * Hands messages over without waiting for the work: deployed it resolves once SQS has them (a send
 * that fails throws); in process at once, the workers running beside the caller.
 */
export async function enqueue(
  deps: Deps,
  queue: QueueName,
  messages: readonly WorkMessage[],
  worker: Worker,
): Promise<void> {
  const handed = handOff(deps, queue, messages, worker);
  if (deps.workQueue) await handed;
}

/** Resolves once the in-process queues of these dependencies have nothing left (tests, the stream reader). */
export const settled = (deps: Deps): Promise<void> => queuesOf(deps).settled();

/** Adds the results of in-process workers into one tally (deployed: nothing to add). */
export function tallyOf(results: readonly (WorkerResult | undefined)[]): Record<string, number> {
  const tally: Record<string, number> = {};
  for (const result of results) if (result) addTally(tally, result.tally);
  return tally;
}
