import { DomainError } from "../errors";

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

/** How many rounds (read, decide, write) a change gets before a record that keeps changing is a 503. */
export const MAX_ROUNDS = 8;

export interface OptimisticOptions {
  /** The caller named the version it saw (If-Match): a change in between is a 412, not a retry. */
  ifMatch?: string;
  /** Other errors that mean a lost race (a transaction conflict). */
  alsoRaced?: (error: unknown) => boolean;
}

/**
 * Optimistic concurrency, the loop written once: `round` reads the record, decides, and writes
 * conditioned on the version it read (putIfVersion), throwing Raced when the write lost the race;
 * then the round runs again on a fresh read — so of two concurrent changes one wins and the other
 * is re-decided against the winner's result (and may be refused). `what` names the record in the
 * 412 and 503 details.
 */
export async function optimistic<T>(
  what: string,
  round: () => Promise<T>,
  options: OptimisticOptions = {},
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await round();
    } catch (error) {
      if (!(error instanceof Raced || options.alsoRaced?.(error))) throw error;
      if (options.ifMatch !== undefined)
        throw new DomainError("precondition_failed", `the ${what} was changed concurrently`);
      if (attempt >= MAX_ROUNDS)
        throw new DomainError("service_unavailable", `the ${what} keeps changing concurrently; retry`);
    }
  }
}
