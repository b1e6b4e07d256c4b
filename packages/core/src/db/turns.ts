import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { Write } from "./commit";
import { isTransientCancellation } from "./errors";
import { type CounterCtx, nextId, takeCounterWrite } from "./ids";
import { counterKey } from "./keys";
import { backoff, Raced } from "./optimistic";

/**
 * One wait is at most this long; then the writer tries (and, losing, looks again: the interval it
 * measured may be off). With optimistic()'s MAX_ROUNDS that bounds a change; on AWS the API
 * function's 25 s timeout ends a longer line first, before anything is written.
 */
const MAX_WAIT_MS = 10_000;

/**
 * Taking turns on a hot counter. N concurrent writers of one counter item (a user's gapless invoice
 * numbers) have one winner per round; losers that re-read and retry after a blind backoff collide
 * again, so each paid O(N) rounds (33.6 requests per finalize at N = 50). A loser here:
 *  - needs no re-read: the failed condition hands back the counter as it is (ALL_OLD in the
 *    transaction's CancellationReasons);
 *  - takes a ticket once, an atomic ADD on a separate per-counter item (one UpdateItem, in no
 *    transaction, so it never conflicts);
 *  - reads its place from the counter: each winner's transaction records on the counter the ticket
 *    it served (`served`, no extra request), so ticket − served − 1 losers are ahead of it;
 *  - sleeps that many times the interval between commits it measured, and then takes the value the
 *    counter will hold by then (what it saw + those ahead): usually right, so it usually wins.
 * The ticket only schedules: correctness is still the transaction's condition on the counter's
 * value. A wrong guess costs one failed transaction, which hands back the true value; a ticket
 * holder that died or is slow delays the others by one wait at most (a wait in which the counter
 * did not move means nobody ahead is moving: go). Only losers take tickets, so a write that meets
 * no contention costs exactly what it did. docs/reliability.md, "hot counters".
 */
export class Turns {
  private ticket: number | undefined;
  /** The counter's value after which this writer's turn comes (set at its first loss). */
  private target: number | undefined;
  private guess: number | undefined;
  /** The loss the counter's write reported, and the counter as its condition found it. */
  private lost: Raced | undefined;
  private seen: Record<string, unknown> | undefined;
  /** The counter's value last known, and when. */
  private mark: { value: number; at: number } | undefined;
  /** Milliseconds between two commits on the counter, as last measured. */
  private interval = 0;

  constructor(
    private readonly ctx: CounterCtx,
    private readonly counter: string,
  ) {}

  /** The value to take after at the next attempt, when a lost race told it (no read needed). */
  get last(): number | undefined {
    return this.guess;
  }

  /** The write that takes the value after `last` (takeCounterWrite), serving this writer's ticket. */
  take(last: number): Write {
    if (this.guess === undefined) this.mark = { value: last, at: performance.now() };
    return takeCounterWrite(
      this.ctx,
      this.counter,
      last,
      (seen) => {
        this.seen = seen;
        this.lost = new Raced();
        return this.lost;
      },
      { turn: this.ticket },
    );
  }

  /** optimistic()'s afterLoss. */
  readonly afterLoss = async (round: number, error: unknown): Promise<void> => {
    const onCounter = error === this.lost && this.lost !== undefined;
    this.lost = undefined;
    if (!onCounter && !isTransientCancellation(error)) {
      this.guess = undefined; // another record changed: decide again on fresh reads
      return backoff(round);
    }
    // A conflict names no value: read the counter (beside the ticket, one round trip).
    const [ticket, counter] = await Promise.all([
      this.ticket ?? nextId(this.ctx.db, this.ctx.userId, `${this.counter}Tickets`),
      onCounter ? this.seen : this.read(),
    ]);
    const now = performance.now();
    const value = Number(counter?.value ?? 0);
    const mark = this.mark;
    const progress = mark ? value - mark.value : 0;
    const first = this.ticket === undefined;
    this.ticket = ticket;
    this.mark = { value, at: now };
    if (first) {
      // Its place: the losers that took tickets before it and were not served yet.
      const ahead = Math.max(0, ticket - Number(counter?.served ?? 0) - 1);
      this.target = value + ahead;
    }
    // A turn's length: at a first loss, half its own transaction's time (a transaction in the burst
    // of the first round takes about twice as long as one in the line; too long a guess costs time,
    // too short one look more); then measured over its waits, from the commits made meanwhile.
    if (mark && first) this.interval = (now - mark.at) / Math.max(1, progress) / 2;
    else if (mark && progress > 0) this.interval = (this.interval + (now - mark.at) / progress) / 2;
    const target = this.target ?? value;
    // Its turn; or its number went to another (a newcomer): go now. Or nobody moved while it
    // waited: whoever is ahead died or stalls, go after a short jitter.
    if (value >= target || (!first && progress <= 0)) {
      this.target = value;
      this.guess = value;
      if (value < target || !onCounter) await backoff(1); // a conflict: its winner is still writing
      return;
    }
    this.guess = target;
    const wait = Math.min((target - value) * this.interval, MAX_WAIT_MS);
    await sleep(wait);
  };

  private async read(): Promise<Record<string, unknown> | undefined> {
    const key = counterKey(this.ctx.userId, this.counter);
    return (
      await this.ctx.db.doc.send(new GetCommand({ TableName: this.ctx.db.table, Key: key, ConsistentRead: true }))
    ).Item;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
