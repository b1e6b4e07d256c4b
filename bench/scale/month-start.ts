import { GetCommand, ScanCommand } from "@aws-sdk/lib-dynamodb";
import type { Deps } from "@invoicing/core/deps";
import { createDb } from "@invoicing/core/db/dynamodb";
import { dispatchMarkKey, type DueJob } from "@invoicing/core/db/keys";
import { remindersWorker } from "@invoicing/core/invoices/reminders-job";
import { dispatchDue } from "@invoicing/core/queue/dispatch";
import type { QueueName, Worker } from "@invoicing/core/queue/port";
import { recurringWorker } from "@invoicing/core/schedules/recurring-job";
import type { AwsLikeDynamo } from "./aws-like-dynamo";
import { MONTH_START, onShard, type Population, restorePopulation } from "./population";
import type { JobRunner } from "./runner";
import { type CpuFigure, describeCpu, startCpuMeter } from "./cpu";
import { round, SimulatedSes, simDeps, sleep } from "./sim";

/**
 * (i) The drain time of a month start with 1, 2, 4 and 8 workers, each on a fresh copy of the
 * population; (iii) in the 4-worker copy, the items read per due item, per user, in the month
 * start's drain and in the next run an hour later (items waiting for the email quota must not be
 * read again and again).
 */
/** SCALE_WORKERS picks some of them while the simulation is worked on (e.g. "1,4"). */
export const WORKER_COUNTS = (process.env.SCALE_WORKERS ?? "1,2,4,8").split(",").map(Number);
/**
 * The month start runs this many times slower than AWS (SCALE_SLOWDOWN): every modelled wait
 * (DynamoDB, SES, the PDF) this many times longer, SES's rate and the partitions' limits this many
 * times lower. A worker then makes a third of the requests a second it makes on AWS, so 4 workers per
 * queue (8 at once) stay within what DynamoDB Local (one JVM, which takes one request at a time:
 * ~100–300 a second on this machine) serves; at AWS's pace 1 worker per queue already makes ~100.
 * The drain times are this many times AWS's; their ratios, the goal, are unchanged.
 */
export const MONTH_SLOWDOWN = Number(process.env.SCALE_SLOWDOWN ?? 3);
/** Emails a user may queue a day in the simulation: a large user's month start needs more. */
export const SIM_EMAIL_QUOTA = 60;
const SMALL_CONSTANT = 10;

export interface DrainFigure {
  workers: number;
  drainSeconds: number;
  rounds: number;
  changed: number;
  failedRuns: number;
  emailsSent: number;
  /** Outbox records still pending after the drain (waiting for the quota, or not yet reached). */
  emailsPending: number;
  /** DynamoDB requests the drain made, and a second: what DynamoDB Local had to serve. */
  requests: number;
  requestsPerSecond: number;
  throttledReads: number;
  throttledWrites: number;
  /** Capacity units per due item (recurring occurrence or reminder, its email included). */
  readUnitsPerItem: number;
  writeUnitsPerItem: number;
  /** What the workers did with the messages, by outcome. */
  outcomes: Record<string, number>;
  /** What the CPU did during the drain (./cpu.ts): near all cores busy, the figure is the machine's. */
  cpu: CpuFigure;
}

export interface ReadsFigure {
  run: string;
  /** Due items handled by the run, all users. */
  handled: number;
  /** Items read, all users (records and due-list entries). */
  itemsRead: number;
  itemsReadPerHandled: number;
  /** Due-list entries read, all users. */
  dueEntriesRead: number;
  /** The user with most due-list entries read beyond what it handled, and by how many. */
  worstUser: string;
  worstExcess: number;
  goal: string;
  meetsGoal: boolean;
}

export interface MonthStartResult {
  runner: string;
  /** MONTH_SLOWDOWN: the drain times are this many times AWS's. */
  slowdown: number;
  drains: DrainFigure[];
  speedup1to4: number;
  speedupGoalMet: boolean;
  reads: ReadsFigure[];
}

/**
 * Gives `work` an AWS-like DynamoDB on emulators started for it and stopped after it (scale.ts): an
 * emulator that served a drain is slower for the next (DynamoDB Local keeps every table's stream
 * records), so each worker count's drain runs on its own.
 */
export type OnFreshEmulators = <T>(work: (dynamo: AwsLikeDynamo) => Promise<T>) => Promise<T>;

export async function measureMonthStart(
  onFresh: OnFreshEmulators,
  population: Population,
  runner: JobRunner,
  log: (line: string) => void,
  /** Told the figures so far after each drain: a run stopped later keeps them. */
  progress: (so: { drains: DrainFigure[]; reads: ReadsFigure[] }) => void = () => {},
): Promise<MonthStartResult> {
  const drains: DrainFigure[] = [];
  const reads: ReadsFigure[] = [];
  for (const workers of WORKER_COUNTS) {
    await onFresh(async (dynamo) => {
      dynamo.setSlowdown(MONTH_SLOWDOWN);
      const drained = await drainOnce(dynamo, population, runner, workers, log);
      drains.push(drained.figure);
      reads.push(...drained.reads);
    });
    progress({ drains, reads });
  }
  const at = (n: number) => drains.find((d) => d.workers === n)?.drainSeconds ?? Number.NaN;
  const speedup = round(at(1) / at(4), 2);
  return {
    runner: runner.describe,
    slowdown: MONTH_SLOWDOWN,
    drains,
    speedup1to4: speedup,
    speedupGoalMet: speedup >= 3,
    reads,
  };
}

/** One drain of a fresh copy of the population by `workers` workers; with 4, also the items read (iii). */
async function drainOnce(
  dynamo: AwsLikeDynamo,
  population: Population,
  runner: JobRunner,
  workers: number,
  log: (line: string) => void,
): Promise<{ figure: DrainFigure; reads: ReadsFigure[] }> {
  const reads: ReadsFigure[] = [];
  // One SES for the account, whatever table a worker's email comes from.
  const ses = new SimulatedSes(MONTH_SLOWDOWN);
  const tables = await Promise.all(
    dynamo.instances.map(async (instance, shard) => {
      const tableName = await restorePopulation(
        instance,
        population,
        onShard(population, shard, dynamo.instances.length),
      );
      dynamo.place(tableName, instance);
      return {
        deps: simDeps(
          dynamo.url,
          tableName,
          MONTH_START,
          { emailDailyQuota: SIM_EMAIL_QUOTA, outbox: ses },
          MONTH_SLOWDOWN,
        ),
        direct: createDb({ tableName, dynamoEndpoint: instance, region: "local" }),
      };
    }),
  );
  try {
    const directs = tables.map((t) => t.direct);
    const before = await dueEntries(directs, MONTH_START);
    dynamo.resetCounts();
    const started = performance.now();
    const meter = startCpuMeter();
    // With 4 workers, also the cron's next run, 15 minutes on, while the queues are still behind.
    let behind: ReadsFigure | undefined;
    const drained = await runner.drain(
      tables.map((t) => t.deps),
      new Date(MONTH_START),
      workers,
      workers === 4
        ? async (attached) => {
            behind = await runWhileBehind(dynamo, attached, directs);
          }
        : undefined,
    );
    const cpu = meter.stop();
    const figure: DrainFigure = {
      workers,
      drainSeconds: round((drained.doneAt - started) / 1000, 1),
      rounds: drained.rounds,
      changed: drained.changed,
      failedRuns: drained.failedRuns,
      emailsSent: ses.sent.length,
      emailsPending: await pendingEmails(directs),
      requests: dynamo.requests(),
      requestsPerSecond: round(dynamo.requests() / cpu.wallSeconds),
      throttledReads: dynamo.throttled.reads,
      throttledWrites: dynamo.throttled.writes,
      readUnitsPerItem: round(dynamo.units.read / (population.due.recurring + population.due.reminders), 1),
      writeUnitsPerItem: round(dynamo.units.write / (population.due.recurring + population.due.reminders), 1),
      outcomes: drained.outcomes ?? {},
      cpu,
    };
    log(
      `  ${workers} worker(s): ${figure.drainSeconds} s in ${figure.rounds} rounds, ${figure.emailsSent} emails sent, ${figure.emailsPending} pending, ${figure.changed} changes, ${figure.requests} DynamoDB requests (${figure.requestsPerSecond}/s), throttled ${figure.throttledReads} reads / ${figure.throttledWrites} writes; outcomes ${JSON.stringify(figure.outcomes)}; ${describeCpu(cpu)}`,
    );
    if (workers === 4) {
      reads.push(await readsOf("month start (the drain)", dynamo, ses, before, await dueEntries(directs, MONTH_START)));
      if (behind) reads.push(behind);
      // The next run, an hour later: what is still due waits for the quota, nothing else is due.
      const later = new Date(Date.parse(MONTH_START) + 3_600_000).toISOString();
      const beforeNext = await dueEntries(directs, later);
      const sentBefore = ses.sent.length;
      dynamo.resetCounts();
      await runner.drain(
        tables.map((t) => ({ ...t.deps, clock: () => new Date(later) }) as Deps),
        new Date(later),
        1,
      );
      const nextSes = { sent: ses.sent.slice(sentBefore) } as SimulatedSes;
      reads.push(await readsOf("next run (1 h later)", dynamo, nextSes, beforeNext, await dueEntries(directs, later)));
      log(`  (iii) items read: ${JSON.stringify(reads)}`);
    }
    return { figure, reads };
  } finally {
    for (const t of tables) {
      t.direct.doc.destroy();
      t.deps.db.doc.destroy();
    }
  }
}

/** The due lists a month start's dispatchers read, with their queues and workers. */
const MONTH_LISTS: { job: DueJob; queue: QueueName; worker: Worker }[] = [
  { job: "recurring", queue: "recurring", worker: recurringWorker },
  { job: "reminders", queue: "reminders", worker: remindersWorker },
];
/** The cron's interval (infra/jobs.ts: recurring and reminders every 15 minutes). */
const CRON_MS = 15 * 60_000;

/**
 * (iii) while the queues are behind: the recurring and reminders dispatchers run again as the cron
 * does 15 minutes on, a moment into the drain, their queues still holding the first run's batches.
 * Each reads from its last run's mark (queue/dispatch.ts), so its due-list entries read are what
 * came due since (the items it may send); before the mark it read, and sent again, everything
 * still due. Measured by the proxy's count of due-list entries returned to the dispatchers (no
 * other due-list query runs meanwhile: the workers read records, the outbox sweep comes after).
 */
async function runWhileBehind(
  dynamo: AwsLikeDynamo,
  attached: readonly Deps[],
  directs: readonly ReturnType<typeof createDb>[],
): Promise<ReadsFigure> {
  await sleep(2_000);
  const later = new Date(Date.parse(MONTH_START) + CRON_MS).toISOString();
  const held = await Promise.all(
    MONTH_LISTS.map(({ queue }) => attached[0]!.workQueue?.backlog?.(queue) ?? Promise.resolve(0)),
  );
  // What each run may read: the entries past its list's mark, per user; and what is still due.
  const newlyDue = new Map<string, number>();
  let stillDue = 0;
  for (const db of directs) {
    const entries = [...(await dueEntriesOf(db, later)).values()];
    for (const { job } of MONTH_LISTS) {
      const mark = await db.doc.send(new GetCommand({ TableName: db.table, Key: dispatchMarkKey(job) }));
      const from = typeof mark.Item?.from === "string" ? mark.Item.from : "";
      for (const entry of entries) {
        if (!entry.duePk.startsWith(`DUE#${job}#`)) continue;
        stillDue++;
        if (entry.dueSk >= from) newlyDue.set(entry.user, (newlyDue.get(entry.user) ?? 0) + 1);
      }
    }
  }
  const readBefore = new Map(dynamo.reads.dueItems);
  await Promise.all(
    attached.flatMap((deps) =>
      MONTH_LISTS.map(({ job, queue, worker }) => dispatchDue(deps, { job, queue, now: later, worker })),
    ),
  );
  const readNow = new Map(
    [...dynamo.reads.dueItems].map(([user, count]) => [user, count - (readBefore.get(user) ?? 0)] as const),
  );
  const read = sum(readNow);
  const { worstUser, worstExcess } = worstOf(readNow, newlyDue);
  const handled = sum(newlyDue);
  return {
    run: `the next cron run (15 min on) while the queues are behind (${held.join(" and ")} messages queued; ${stillDue} entries still due)`,
    handled,
    itemsRead: read,
    itemsReadPerHandled: handled ? round(read / handled, 2) : Number.NaN,
    dueEntriesRead: read,
    worstUser,
    worstExcess,
    goal: `due-list entries read ≤ newly due + ${SMALL_CONSTANT}, per user`,
    meetsGoal: worstExcess <= SMALL_CONSTANT && held.some((n) => n > 0),
  };
}

async function pendingEmails(dbs: readonly ReturnType<typeof createDb>[]): Promise<number> {
  let count = 0;
  for (const db of dbs) count += await pendingEmailsOf(db);
  return count;
}

async function pendingEmailsOf(db: ReturnType<typeof createDb>): Promise<number> {
  let count = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await db.doc.send(
      new ScanCommand({
        TableName: db.table,
        FilterExpression: "begins_with(sk, :outbox) AND #status = :pending",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ":outbox": "OUTBOX#", ":pending": "pending" },
        Select: "COUNT",
        ExclusiveStartKey: startKey,
      }),
    );
    count += out.Count ?? 0;
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  return count;
}

type DueEntries = Map<string, { user: string; duePk: string; dueSk: string }>;

/** Every due-list entry whose time is at or before `now`, by item key (read straight, not metered). */
async function dueEntries(dbs: readonly ReturnType<typeof createDb>[], now: string): Promise<DueEntries> {
  const found: DueEntries = new Map();
  for (const db of dbs) for (const [key, entry] of await dueEntriesOf(db, now)) found.set(key, entry);
  return found;
}

async function dueEntriesOf(db: ReturnType<typeof createDb>, now: string): Promise<DueEntries> {
  const found: DueEntries = new Map();
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await db.doc.send(
      new ScanCommand({
        TableName: db.table,
        FilterExpression: "attribute_exists(duePk) AND dueSk <= :bound",
        ExpressionAttributeValues: { ":bound": `${now}$` },
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of out.Items ?? [])
      found.set(`${item.pk} ${item.sk}`, {
        user: String(item.pk).slice(5),
        duePk: String(item.duePk),
        dueSk: String(item.dueSk),
      });
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  return found;
}

const sum = (m: ReadonlyMap<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

/** The user whose due-list entries read most exceed what it was allowed (handled, or newly due), and by how much. */
function worstOf(
  read: ReadonlyMap<string, number>,
  allowed: ReadonlyMap<string, number>,
): { worstUser: string; worstExcess: number } {
  let worstUser = "";
  let worstExcess = 0;
  for (const user of new Set([...read.keys(), ...allowed.keys()])) {
    const excess = (read.get(user) ?? 0) - (allowed.get(user) ?? 0);
    if (excess > worstExcess) [worstUser, worstExcess] = [user, excess];
  }
  return { worstUser, worstExcess };
}

/**
 * A run's reads against what it handled, per user. Handled: the due entries it took off the list or
 * moved (their dueSk changed), plus the emails it delivered (each an outbox entry due at once).
 */
async function readsOf(
  run: string,
  dynamo: AwsLikeDynamo,
  ses: SimulatedSes,
  before: DueEntries,
  after: DueEntries,
): Promise<ReadsFigure> {
  const handled = new Map<string, number>();
  const add = (user: string) => handled.set(user, (handled.get(user) ?? 0) + 1);
  for (const [key, entry] of before) {
    const now = after.get(key);
    if (!now || now.dueSk !== entry.dueSk) add(entry.user);
  }
  for (const { message } of ses.sent) if (message.userId) add(message.userId);
  const { worstUser, worstExcess } = worstOf(dynamo.reads.dueItems, handled);
  const total = sum(handled);
  const itemsRead = sum(dynamo.reads.items);
  return {
    run,
    handled: total,
    itemsRead,
    itemsReadPerHandled: total ? round(itemsRead / total, 2) : Number.NaN,
    dueEntriesRead: sum(dynamo.reads.dueItems),
    worstUser,
    worstExcess,
    goal: `due-list entries read ≤ handled + ${SMALL_CONSTANT}, per user`,
    meetsGoal: worstExcess <= SMALL_CONSTANT,
  };
}
