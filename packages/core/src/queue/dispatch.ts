import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { DUE_SHARDS, dispatchMarkKey, dueOrder, type DueJob } from "../db/keys";
import { dueFrom, dueItems } from "../db/due";
import type { Deps } from "../deps";
import { handOff, tallyOf } from "./in-process";
import { BATCH_SIZE, type QueueName, type RecordKey, type WorkMessage, type Worker } from "./port";

/**
 * The scheduled dispatcher (docs/operations.md, "Queues"): what a job's cron run does. It reads the
 * keys on the job's due list (byDue, every shard at once), puts them in turns across users, and
 * hands them to the job's workers through the queue, BATCH_SIZE messages at a time. It changes
 * no record itself, so a repeated or concurrent run only sends again what is still due, which the
 * workers find done or do once (each record's own conditional write).
 *
 * Deployed, while the queue still holds messages of earlier runs (its workers are behind, e.g. on a
 * month start), what was due by the last run is in the queue or done: sending it again would add a
 * copy of the whole backlog every run (a month start 8 hours long, run every 15 minutes, would send
 * its tail 30 times), and reading it again would read the backlog's keys every run. So each run
 * leaves a mark (the dueSk its reading and sending got through) and, while the queue is behind, the
 * next run reads from that mark only. Once the queue is empty, a run reads the whole list again,
 * which sends what the workers left due (deferred at their deadline, refused, dead-lettered), and
 * what was put on the list with a time before the mark (a backdated due date, a change committed
 * just after a run read its list): such an entry waits for the queue to empty, as it would have
 * waited behind the backlog in the queue.
 */
export interface DueEntry {
  userId: string;
  key: RecordKey;
  /** Its place on the due list (db/keys.ts dueOrder): oldest first. */
  order: string;
}

/** Keys a run reads at most, over all shards: ~150 bytes each, a few MB of reads. The rest: next run. */
export const MAX_READ_PER_RUN = 100_000;

export interface DueRead {
  entries: DueEntry[];
  /** Whether every due entry was read (false: the deadline or the limit came first). */
  complete: boolean;
  /** When not complete: the least dueSk left unread, where a later run must read from. */
  firstUnread?: string;
}

/**
 * The due entries of `job` at `now` (db/keys.ts isDue says when), oldest first in each
 * shard, shards read in parallel; from the dueSk `from` on when given; reading stops at `deadline`
 * or `limit` (MAX_READ_PER_RUN).
 */
export async function readDue(
  deps: Pick<Deps, "db">,
  job: DueJob,
  now: string,
  options: { deadline?: number; limit?: number; from?: string } = {},
): Promise<DueRead> {
  const limit = options.limit ?? MAX_READ_PER_RUN;
  const perShard = Math.ceil(limit / DUE_SHARDS);
  // A mark past what is due now (a run "as of" an earlier time): nothing after it is due yet.
  if (options.from !== undefined && options.from >= dueFrom(job, now)) return { entries: [], complete: true };
  let complete = true;
  let firstUnread: string | undefined;
  const shards = await Promise.all(
    Array.from({ length: DUE_SHARDS }, async (_, shard) => {
      const entries: DueEntry[] = [];
      for await (const item of dueItems(deps.db, job, now, { shard, from: options.from })) {
        if (entries.length >= perShard || (options.deadline !== undefined && Date.now() >= options.deadline)) {
          complete = false;
          firstUnread = least(firstUnread, dueOrder(item));
          break;
        }
        const pk = String(item.pk);
        entries.push({ userId: pk.slice("USER#".length), key: { pk, sk: String(item.sk) }, order: dueOrder(item) });
      }
      return entries;
    }),
  );
  const entries = shards.flat().sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0));
  return { entries, complete, ...(firstUnread === undefined ? {} : { firstUnread }) };
}

const least = (a: string | undefined, b: string): string => (a === undefined || b < a ? b : a);

/** The job's mark (see above): where a run reads from while the queue is behind; none before the first run. */
async function readMark(deps: Pick<Deps, "db">, job: DueJob): Promise<string | undefined> {
  const out = await deps.db.doc.send(
    new GetCommand({ TableName: deps.db.table, Key: dispatchMarkKey(job), ConsistentRead: true }),
  );
  return typeof out.Item?.from === "string" ? out.Item.from : undefined;
}

async function writeMark(deps: Pick<Deps, "db">, job: DueJob, from: string, at: string): Promise<void> {
  await deps.db.doc.send(new PutCommand({ TableName: deps.db.table, Item: { ...dispatchMarkKey(job), from, at } }));
}

/**
 * The mark a run leaves: every due entry sorting before it was sent by this run, or by an earlier
 * run whose messages are still queued or done. Past what is due at `now`, unless the run stopped
 * early: then before its first entry left unread or unsent (a later run sends those again).
 */
export function markAfter(job: DueJob, now: string, read: DueRead, unsent: readonly DueEntry[]): string {
  let mark = read.firstUnread === undefined ? dueFrom(job, now) : least(dueFrom(job, now), read.firstUnread);
  for (const entry of unsent) mark = least(mark, entry.order);
  return mark;
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
  /** Deployed: the messages the queue held before this run (0 in process). */
  backlog: number;
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
  const queue = deps.workQueue;
  const backlog = queue?.backlog ? await queue.backlog(spec.queue) : 0;
  const from = backlog > 0 ? await readMark(deps, spec.job) : undefined;
  const read = await readDue(deps, spec.job, spec.now, { deadline, from });
  const ordered = inTurns(read.entries);
  const messages: WorkMessage[] = ordered.map((entry) => ({
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
  if (queue) await writeMark(deps, spec.job, markAfter(spec.job, spec.now, read, ordered.slice(dispatched)), spec.now);
  return {
    dispatched,
    complete: read.complete && dispatched === messages.length,
    tally: tallyOf(results),
    failed,
    backlog,
  };
}

/**
 * Deployed, a job's line also says how many records the run handed to the workers, whether all,
 * and how many messages its queue still held before (above 0: it read only what came due since its
 * last run).
 */
export const dispatchFields = (deps: Deps, run: Dispatched) =>
  deps.workQueue ? { dispatched: run.dispatched, complete: run.complete, backlog: run.backlog } : {};
