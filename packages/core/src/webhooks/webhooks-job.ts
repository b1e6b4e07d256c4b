// The `webhooks` job (the scheduled run of due attempts) and the `webhooks` queue's worker, like the
// other *-job.ts; an attempt itself is ./deliveries.ts.

import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { Deps } from "../deps";
import { nowIso } from "../deps";
import { dueItems } from "../db/due";
import { DUE_SHARDS, dueOrder, isDueEntry } from "../db/keys";
import type { JobOptions, JobResult } from "../job";
import { errorName, log } from "../observability/context-log";
import { batchesByUser } from "../queue/dispatch";
import { handOff, tallyOf } from "../queue/in-process";
import type { WorkMessage, Worker } from "../queue/port";
import { ATTEMPT_LIMITS, ATTEMPT_TIMEOUT_MS, attemptOfKey, runAttempt, type AttemptItem } from "./deliveries";
import { attemptFairly } from "./fairness";
import { takeEndpointLease } from "./lease";

type AttemptDeps = Pick<Deps, "db" | "clock" | "webhookPolicy">;

/**
 * What one run reads of the due list, at most: 2,000 in all, an equal share per shard (oldest due
 * first; the shards are a hash, so they fill evenly), and per user across the run, so a user with a
 * deep backlog cannot fill the window the others' attempts are read in. Totals, so the run's size
 * does not change with DUE_SHARDS.
 */
const MAX_DUE_PER_SHARD = Math.ceil(2_000 / DUE_SHARDS);
const MAX_DUE_PER_USER = 100;
/** Due items looked at per run, taken or not, shared by the shards: what a run's read costs at most. */
const MAX_SCANNED_PER_SHARD = Math.ceil(80_000 / DUE_SHARDS);
/** Without a deadline from the caller (`npm run jobs`, the local ticker): a run takes work this long. */
const LOCAL_RUN_BUDGET_MS = 50_000;
/** After the last attempt starts: its timeout and the writes that record it, before the deadline. */
const FINISH_MARGIN_MS = ATTEMPT_TIMEOUT_MS + 5_000;

/**
 * The `webhooks` job: the attempts due by `now` (retries, first attempts that a crash or a lost
 * lease left, redeliveries), read in a bounded window (readDue) and dispatched to the `webhooks`
 * queue, one message per endpoint with its attempts in due order, each user's in one batch (queue/dispatch.ts);
 * the queue's workers make them fairly (webhooksWorker). It dispatches nothing after
 * `options.deadline` (the Lambda's remaining time, functions/src/lambda/jobs/scheduled.ts); in
 * process the workers stop starting attempts LOCAL_RUN_BUDGET_MS after the run began: what they did
 * not start stays due for the next run, counted as `deferred`.
 */
export async function runWebhooksJob(deps: Deps, now: Date, options: JobOptions = {}): Promise<JobResult> {
  const nowIsoString = now.toISOString();
  const takeUntil = (options.deadline ?? Date.now() + LOCAL_RUN_BUDGET_MS) - FINISH_MARGIN_MS;
  const due = await readDue(deps, nowIsoString, takeUntil);
  const byEndpoint = new Map<string, WorkMessage>();
  for (const item of due.items) {
    const group = `${item.userId}#${item.endpointId}`;
    let message = byEndpoint.get(group);
    if (!message) {
      message = {
        queue: "webhooks",
        now: nowIsoString,
        userId: item.userId,
        keys: [],
        data: { jobClock: true, takeUntil },
      };
      byEndpoint.set(group, message);
    }
    message.keys.push({ pk: item.pk, sk: item.sk });
  }
  const results = await Promise.all(
    batchesByUser([...byEndpoint.values()]).map((batch) => handOff(deps, "webhooks", batch, webhooksWorker)),
  );
  const counts = { succeeded: 0, failed: 0, dropped: 0, skipped: 0, deferred: 0, ...tallyOf(results) };
  return {
    job: "webhooks",
    now: nowIsoString,
    changed: counts.succeeded + counts.failed + counts.dropped,
    ...counts,
    deferred: counts.deferred + due.leftUnread,
    ...(deps.workQueue ? { dispatched: due.items.length } : {}),
  };
}

/**
 * The `webhooks` queue's worker: each message is one endpoint's attempts in order (from the job, or
 * the first attempts of a stream batch from the subscriber). It reads each attempt (consistent),
 * keeps those whose time has come and that are still to make, and makes them fairly
 * (./fairness.ts: users in turn, one at a time per endpoint, an endpoint that fails takes no
 * more). It starts none after its deadline (the Lambda's time, or the job's run in process): those
 * stay due for the webhooks job (`deferred`).
 */
export const webhooksWorker: Worker = async (deps, messages, options = {}) => {
  const counts: Record<string, number> = { succeeded: 0, failed: 0, dropped: 0, skipped: 0, deferred: 0 };
  const retry: WorkMessage[] = [];
  const items: { item: AttemptItem; deps: AttemptDeps }[] = [];
  for (const message of messages) {
    // A job's attempts are stamped with its `now` (attemptedAt, the next retry); the subscriber's
    // with the clock.
    const attemptDeps = message.data?.jobClock ? { ...deps, clock: () => new Date(message.now) } : deps;
    const clockNow = nowIso(deps);
    const bound = clockNow > message.now ? clockNow : message.now;
    try {
      for (const key of message.keys) {
        const out = await deps.db.doc.send(
          new GetCommand({ TableName: deps.db.table, Key: key, ConsistentRead: true }),
        );
        const item = out.Item as AttemptItem | undefined;
        if (item && isDueEntry("webhooks", item, bound) && (item.status === "pending" || item.status === "sending"))
          items.push({ item, deps: attemptDeps });
        else counts.skipped!++;
      }
    } catch (error) {
      log("warn", "webhooks worker: a message failed; it comes again", { error: errorName(error) });
      retry.push(message);
    }
  }
  const takeUntils = messages.map((m) => m.data?.takeUntil).filter((t): t is number => typeof t === "number");
  const deadline = options.deadline ?? (takeUntils.length > 0 ? Math.min(...takeUntils) : undefined);
  const depsOf = new Map(items.map((entry) => [entry.item, entry.deps]));
  const { deferred } = await attemptFairly(
    items.map((entry) => entry.item),
    ATTEMPT_LIMITS,
    async (item) => {
      // One attempt in flight per endpoint across workers (./lease.ts): held elsewhere, this one
      // stays pending and due, for the next run (counted as deferred).
      const attemptDeps = depsOf.get(item)!;
      const lease = await takeEndpointLease(
        deps,
        item.userId,
        item.endpointId,
        attemptDeps.webhookPolicy?.timeoutMs ?? ATTEMPT_TIMEOUT_MS,
      );
      if (!lease) {
        counts.deferred!++;
        return "busy";
      }
      try {
        const result = await runAttempt(attemptDeps, item);
        counts[result]!++;
        return result;
      } finally {
        await lease.release();
      }
    },
    { takeUntil: deadline === undefined ? undefined : deadline - (options.deadline ? FINISH_MARGIN_MS : 0) },
  );
  counts.deferred! += deferred;
  return { tally: counts, retry };
};

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
        // The due list carries keys only (db/table-definition.ts): the user and the endpoint are
        // the key's; the worker reads the attempt itself.
        const item = { ...raw, ...attemptOfKey(String(raw.pk), String(raw.sk)) } as unknown as AttemptItem;
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
  items.sort((a, b) => (dueOrder(a) < dueOrder(b) ? -1 : 1));
  return { items, leftUnread };
}
