import { DUE_SHARDS, dueOrder, type DueJob } from "../db/keys";
import { dueItems } from "../db/due";
import type { Deps } from "../deps";
import { handOff, tallyOf } from "./in-process";
import { BATCH_SIZE, type QueueName, type RecordKey, type WorkMessage, type Worker } from "./port";

/**
 * The scheduled dispatcher (docs/operations.md, "Queues"): what a job's cron run does. It reads the
 * keys on the job's due list (byDue, every shard at once), puts them in turns across users, and
 * hands them to the job's workers through the queue, BATCH_SIZE messages at a time. It changes
 * nothing itself, so a repeated or concurrent run only sends again what is still due, which the
 * workers find done or do once (each record's own conditional write).
 */
export interface DueEntry {
  userId: string;
  key: RecordKey;
  /** Its place on the due list (db/keys.ts dueOrder): oldest first. */
  order: string;
}

/** Keys a run reads at most, over all shards: ~150 bytes each, a few MB of reads. The rest: next run. */
export const MAX_READ_PER_RUN = 100_000;

/**
 * The due entries of `job` at `now` (db/keys.ts isDue says when), oldest first in each
 * shard, shards read in parallel; reading stops at `deadline` or MAX_READ_PER_RUN.
 */
export async function readDue(
  deps: Pick<Deps, "db">,
  job: DueJob,
  now: string,
  options: { deadline?: number; limit?: number } = {},
): Promise<{ entries: DueEntry[]; complete: boolean }> {
  const limit = options.limit ?? MAX_READ_PER_RUN;
  const perShard = Math.ceil(limit / DUE_SHARDS);
  let complete = true;
  const shards = await Promise.all(
    Array.from({ length: DUE_SHARDS }, async (_, shard) => {
      const entries: DueEntry[] = [];
      for await (const item of dueItems(deps.db, job, now, { shard })) {
        if (entries.length >= perShard || (options.deadline !== undefined && Date.now() >= options.deadline)) {
          complete = false;
          break;
        }
        const pk = String(item.pk);
        entries.push({ userId: pk.slice("USER#".length), key: { pk, sk: String(item.sk) }, order: dueOrder(item) });
      }
      return entries;
    }),
  );
  const entries = shards.flat().sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0));
  return { entries, complete };
}

/**
 * Users take turns: each user's first entry (users in the order of their oldest), then each one's
 * second, and so on. A user with 5,000 due entries comes first at most once per round, so another
 * user's first entry is in the first round: in the first batch when fewer than BATCH_SIZE users
 * have work, and never later than (users ahead of it) / BATCH_SIZE batches.
 */
export function inTurns<T extends { userId: string }>(entries: readonly T[]): T[] {
  const byUser = new Map<string, T[]>();
  for (const entry of entries) {
    let own = byUser.get(entry.userId);
    if (!own) byUser.set(entry.userId, (own = []));
    own.push(entry);
  }
  const users = [...byUser.values()];
  const ordered: T[] = [];
  for (let round = 0; ordered.length < entries.length; round++) {
    for (const own of users) if (round < own.length) ordered.push(own[round]!);
  }
  return ordered;
}

/**
 * Batches in which no user's messages are split (each user's at most BATCH_SIZE: a user has at most
 * 10 webhook endpoints, one message each), users in the order given: so one worker holds all of a
 * user's messages of a run, and the per-user bound of its fair scheduling (webhooks/fairness.ts)
 * holds across the run's workers, while the other users' batches run beside it.
 */
export function batchesByUser<T extends { userId: string }>(items: readonly T[], size = BATCH_SIZE): T[][] {
  const byUser = new Map<string, T[]>();
  for (const item of items) {
    let own = byUser.get(item.userId);
    if (!own) byUser.set(item.userId, (own = []));
    own.push(item);
  }
  const out: T[][] = [];
  for (const own of byUser.values()) {
    for (const part of batches(own, size)) {
      const open = out.find((batch) => batch.length + part.length <= size);
      if (open) open.push(...part);
      else out.push([...part]);
    }
  }
  return out;
}

export function batches<T>(items: readonly T[], size = BATCH_SIZE): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const DISPATCH_MARGIN_MS = 5_000;

export interface Dispatched {
  /** Messages handed to the workers. */
  dispatched: number;
  /** Whether every due entry was read (false: the deadline or MAX_READ_PER_RUN came first). */
  complete: boolean;
  /** In process: what the workers did (empty deployed, where they do it later). */
  tally: Record<string, number>;
  /** In process: messages a worker failed on (they stay due). */
  failed: number;
}

/**
 * One dispatch run of a due job: read, put in turns, hand off (one record per message). In process
 * it waits for the workers, so `npm run jobs` prints what they did, as before the queues.
 */
export async function dispatchDue(
  deps: Deps,
  spec: { job: DueJob; queue: QueueName; now: string; worker: Worker; deadline?: number },
): Promise<Dispatched> {
  // Stop reading and sending a little before the run's end: a send in flight must finish.
  const deadline = spec.deadline === undefined ? undefined : spec.deadline - DISPATCH_MARGIN_MS;
  const { entries, complete } = await readDue(deps, spec.job, spec.now, { deadline });
  const messages: WorkMessage[] = inTurns(entries).map((entry) => ({
    queue: spec.queue,
    now: spec.now,
    userId: entry.userId,
    keys: [entry.key],
  }));
  const sent: Promise<Awaited<ReturnType<typeof handOff>>>[] = [];
  let dispatched = 0;
  for (const batch of batches(messages)) {
    if (deadline !== undefined && Date.now() >= deadline) break; // the rest: next run
    const handed = handOff(deps, spec.queue, batch, spec.worker);
    // Deployed, a send must finish before the next (in order, and a failure stops the run); in
    // process the batches are queued at once and the workers take them in order.
    if (deps.workQueue) await handed;
    sent.push(handed);
    dispatched += batch.length;
  }
  const results = await Promise.all(sent);
  const failed = results.reduce((n, r) => n + (r?.retry.length ?? 0), 0);
  return { dispatched, complete: complete && dispatched === messages.length, tally: tallyOf(results), failed };
}

/** Deployed, a job's line also says how many records the run handed to the workers, and whether all. */
export const dispatchFields = (deps: Deps, run: Dispatched) =>
  deps.workQueue ? { dispatched: run.dispatched, complete: run.complete } : {};
