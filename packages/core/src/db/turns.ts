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
 * Taking turns on a hot counter (docs/reliability.md, "Hot counters"). N concurrent writers of one
 * counter item (a user's gapless invoice numbers) have one winner per round; losers that re-read
 * and retry after a blind backoff collide again, O(N) rounds each. A loser here keeps its reads
 * (the failed condition hands back the counter: ALL_OLD), takes a ticket once (an ADD on a separate
 * item, in no transaction, so it never conflicts), finds its place from the ticket the counter's
 * last winner served (`served`, set in the winner's own transaction), sleeps that many measured
 * intervals between commits, and then takes the value the counter will hold by then.
 * The ticket only schedules: correctness is still the transaction's condition on the counter's
 * value. A wrong guess costs one failed transaction, which hands back the true value; a counter
 * that did not move during a wait means nobody ahead is moving (a dead ticket holder): go. Only
 * losers take tickets, so a write that meets no contention costs exactly what it did.
 */
/** Measurement only (bench/finalize.ts compares the loop with and without turns in one run). */
export const turnsSwitch = { on: true };

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
    return turnsSwitch.on ? this.guess : undefined;
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
    if (!turnsSwitch.on) return backoff(round);
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
    // Its turn; or its number went to another (a newcomer, a holder out of order): go now. Or the
    // counter did not move while it waited: whoever is ahead died or stalls, go after the backoff.
    if (value >= target || (!first && progress <= 0)) {
      this.target = value;
      this.guess = value;
      // Stalled, or a conflict (its winner may still be writing): the loop's own growing backoff.
      if (value < target || !onCounter) await backoff(round);
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
