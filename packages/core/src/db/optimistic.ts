import { AsyncLocalStorage } from "node:async_hooks";
import { DomainError } from "../errors";
import { METRIC } from "../observability/metric-names";
import { countMetric } from "../observability/metrics";
import { isTransientCancellation } from "./errors";

/**
 * The record changed between the read and the conditional write (putIfVersion's condition failed on
 * a record that still exists and could still take the change): read it again and decide again.
 * Thrown from a write's onConditionFailed.
 */
export class Raced extends Error {
  constructor() {
    super("the record changed after it was read");
    this.name = "Raced";
  }
}

/**
 * How many rounds (read, decide, write) a change gets before a record that keeps changing is a 503.
 * One limit for every loop: of N concurrent writers of one item each round one wins, so the last
 * needs N rounds, and the busiest items — a user's number and id counters, an invoice's payments,
 * the email quota — take a few dozen writers at once (20 concurrent payments of one invoice, a
 * dozen concurrent creates of one user are tested). A record edited by hand rarely needs a second.
 */
export const MAX_ROUNDS = 60;

/**
 * After lost round `round`: a random wait up to 5·2^(round−1) ms (5, 10, 20, …), at most 200 ms. The
 * losers of a round would otherwise come back together and collide again; the first waits are a few
 * ms, so a single lost race costs almost nothing, and the cap bounds a request's whole wait.
 */
export const backoff = (round: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(200, 5 * 2 ** (round - 1))));

interface OptimisticOptions {
  /** The caller named the version it saw (If-Match): a change in between is a 412, not a retry. */
  ifMatch?: string;
  /** Other errors that mean a lost race (the email quota changed). A transaction conflict always does. */
  alsoRaced?: (error: unknown) => boolean;
}

/** The rounds the outermost loop of a change has run so far, set while one of its rounds runs. */
interface Loop {
  rounds: number;
}
const outerLoop = new AsyncLocalStorage<Loop>();

/** Whether this code runs inside an optimistic() round: a lost race is then that loop's to retry. */
export const inOptimisticRound = (): boolean => outerLoop.getStore() !== undefined;

/**
 * THE retry loop of the code (docs/reliability.md, "Retry policy"): runs `attempt` until it returns,
 * or throws an error `isRetryable` refuses, or MAX_ROUNDS rounds have run (then 503), waiting
 * backoff() between rounds. optimistic() is this loop for a read-decide-write
 * change; commit() runs a transaction outside any optimistic() in it too.
 */
export async function retryRounds<T>(
  what: string,
  attempt: (round: number) => Promise<T>,
  isRetryable: (error: unknown) => boolean,
): Promise<T> {
  const loop: Loop = { rounds: 0 };
  for (;;) {
    loop.rounds++;
    try {
      return await outerLoop.run(loop, () => attempt(loop.rounds));
    } catch (error) {
      if (!isRetryable(error)) throw error;
      if (loop.rounds >= MAX_ROUNDS) {
        countMetric(METRIC.optimisticLoopExhausted);
        throw new DomainError("service_unavailable", `the ${what} kept changing concurrently; retry`);
      }
      await backoff(loop.rounds);
    }
  }
}

/**
 * For commit() inside a round: one more send of the same transaction (whose earlier copy's outcome
 * is unknown), counted as a round of the enclosing loop, after that loop's backoff. False when the
 * loop has no round left (or there is no loop): the caller then gives up, and the loop answers 503.
 * So a change's transaction sends, resends included, never exceed MAX_ROUNDS.
 */
export async function anotherRound(): Promise<boolean> {
  const loop = outerLoop.getStore();
  if (!loop || loop.rounds >= MAX_ROUNDS) return false;
  await backoff(loop.rounds);
  loop.rounds++;
  return true;
}

/**
 * Optimistic concurrency, the loop written once: `round` reads the record, decides, and writes
 * conditioned on the version it read (putIfVersion), throwing Raced when the write lost the race;
 * then the round runs again on a fresh read — so of two concurrent changes one wins and the other
 * is re-decided against the winner's result (and may be refused). `round` gets its number (1 for
 * the first). `what` names the record in the 412 and 503 details.
 *
 * One loop per change, however the use cases nest: an optimistic() called inside another one's
 * round (the recurring job's delivery finalizes, then sends) runs its round once and hands a lost
 * race to the outer loop, which reads and decides everything again; and commit() inside a round
 * leaves a transaction conflict to the loop, and counts any resend of its own against the loop's
 * rounds (anotherRound). So a change costs at most MAX_ROUNDS transaction sends in all
 * (docs/reliability.md, "The worst case").
 */
export async function optimistic<T>(
  what: string,
  round: (round: number) => Promise<T>,
  options: OptimisticOptions = {},
): Promise<T> {
  const isRace = (error: unknown) =>
    error instanceof Raced || isTransientCancellation(error) || options.alsoRaced?.(error) === true;
  const lost = () => new DomainError("precondition_failed", `the ${what} was changed concurrently`);
  const retryable = (error: unknown) => {
    if (!isRace(error)) return false;
    if (options.ifMatch !== undefined) throw lost();
    return true;
  };
  if (inOptimisticRound()) {
    try {
      return await round(1);
    } catch (error) {
      if (!retryable(error)) throw error;
      throw error instanceof Raced ? error : new Raced();
    }
  }
  return retryRounds(what, round, retryable);
}
