// The `webhooks` job (the scheduled run of due attempts), like the other *-job.ts; an attempt itself is ./deliveries.ts.

import type { Deps } from "../context";
import { dueItems } from "../db/due";
import { DUE_SHARDS } from "../db/keys";
import type { JobOptions, JobResult } from "../job";
import { ATTEMPT_LIMITS, ATTEMPT_TIMEOUT_MS, runAttempt, type AttemptItem } from "./deliveries";
import { attemptFairly } from "./fairness";

/**
 * What one run reads of the due list, at most: per shard (oldest due first), and per user across
 * the run, so a user with a deep backlog cannot fill the window the others' attempts are read in.
 */
const MAX_DUE_PER_SHARD = 500;
const MAX_DUE_PER_USER = 100;
/** Due items looked at per shard, taken or not: what a run's read costs at most (about 10 pages). */
const MAX_SCANNED_PER_SHARD = 20_000;
/** Without a deadline from the caller (`npm run jobs`, the local ticker): a run takes work this long. */
const LOCAL_RUN_BUDGET_MS = 50_000;
/** After the last attempt starts: its timeout and the writes that record it, before the deadline. */
const FINISH_MARGIN_MS = ATTEMPT_TIMEOUT_MS + 5_000;

/**
 * The `webhooks` job: the attempts due by `now` (retries, first attempts that a crash or a lost
 * lease left, redeliveries), read in a bounded window and made fairly (./fairness.ts). It starts
 * no attempt after `options.deadline` less the time an attempt needs (the Lambda's remaining time,
 * functions/src/lambda/jobs/scheduled.ts; locally LOCAL_RUN_BUDGET_MS from its start): what it did not
 * start stays due for the next run, counted as `deferred`.
 */
export async function runWebhooksJob(deps: Deps, now: Date, options: JobOptions = {}): Promise<JobResult> {
  const nowIsoString = now.toISOString();
  const takeUntil = (options.deadline ?? Date.now() + LOCAL_RUN_BUDGET_MS) - FINISH_MARGIN_MS;
  const due = await readDue(deps, nowIsoString, takeUntil);
  const counts = { succeeded: 0, failed: 0, dropped: 0, skipped: 0 };
  // The attempt's own times (attemptedAt, the next retry) follow the job's "now".
  const jobDeps = { ...deps, clock: () => now };
  const { deferred } = await attemptFairly(
    due.items,
    ATTEMPT_LIMITS,
    async (item) => {
      const result = await runAttempt(jobDeps, item);
      counts[result]++;
      return result;
    },
    { takeUntil },
  );
  return {
    job: "webhooks",
    now: nowIsoString,
    changed: counts.succeeded + counts.failed + counts.dropped,
    ...counts,
    deferred: deferred + due.leftUnread,
  };
}

async function readDue(
  deps: Deps,
  now: string,
  takeUntil: number,
): Promise<{ items: AttemptItem[]; leftUnread: number }> {
  const items: AttemptItem[] = [];
  const perUser = new Map<string, number>();
  let leftUnread = 0;
  const shards = Array.from({ length: DUE_SHARDS }, (_, shard) => shard);
  await Promise.all(
    shards.map(async (shard) => {
      let read = 0;
      let scanned = 0;
      for await (const raw of dueItems(deps.db, "webhooks", now, { shard })) {
        const item = raw as unknown as AttemptItem;
        const ofUser = perUser.get(item.userId) ?? 0;
        scanned++;
        const full = read >= MAX_DUE_PER_SHARD || scanned > MAX_SCANNED_PER_SHARD;
        // Out of time: still counted (reading is quick, and bounded by the scan), never taken.
        if (full || ofUser >= MAX_DUE_PER_USER || Date.now() >= takeUntil) {
          leftUnread++;
          if (full) break;
          continue;
        }
        perUser.set(item.userId, ofUser + 1);
        items.push(item);
        read++;
      }
    }),
  );
  // Oldest due first across shards: each user's endpoints then take their attempts in due order.
  items.sort((a, b) => (String(a.dueSk) < String(b.dueSk) ? -1 : 1));
  return { items, leftUnread };
}
