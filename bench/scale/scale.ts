import { mkdirSync, writeFileSync } from "node:fs";
import { onFreshDynamos, type RunningDynamo } from "@invoicing/local/dynamo";
import { type AwsLikeDynamo, startAwsLikeDynamo } from "./aws-like-dynamo";
import { type ApiLatencyResult, measureApiLatency } from "./api-latency";
import { noLimits, userLimits } from "./api-limits";
import { type CpuFigure, describeCpu, startCpuMeter } from "./cpu";
import { BURST, BURST_PER_SECOND, type LagResult, measureLag, SLOW_RECEIVER_MS } from "./lag";
import { measureMonthStart, type MonthStartResult, SIM_EMAIL_QUOTA } from "./month-start";
import { buildPopulation, type Population, type PopulationSpec } from "./population";
import { fannedOutJobs, serialJobs, streamSubscriber } from "./runner";
import { DYNAMO_LATENCY, PARTITION_LIMITS, PDF_DRAW_MS, round, SCALE, SES, sleep } from "./sim";

/**
 * `npm run bench -- scale`: the scale simulation (issue 37 item 4, issue 38's API latency goal).
 * A skewed population on DynamoDB Local behind a proxy that throttles per partition key and adds
 * AWS-like latency; prints each part's figures with its goal, met or not, as soon as the part ends,
 * with what the CPU did meanwhile (./cpu.ts), and writes bench/scale-results.json after each part.
 *
 * SCALE_PARTS picks the parts (default all: `month,lag,api`); SCALE_USERS the population's size
 * (default below); everything else is stated in sim.ts. Each part has a deadline: one that has not
 * ended by it is reported as not measured and the run ends there (its work would weigh on the next
 * part's figures), and the whole run ends by RUN_DEADLINE_MS whatever happens: the bench cannot hang.
 */
/**
 * 200 users, so that 1 % is two large users, as in the population (2,000 users, 20 large):
 * each month start ends with the large users' items alone, and with one large user (40 users, the
 * 1 % rounded up) that end was one user's items, 72 % of the work, every worker on one partition and
 * its counters at once. With two, the workers of the end take turns between them, as at scale the
 * last rounds hold many large users' items.
 */
export const POPULATION: PopulationSpec = {
  users: Number(process.env.SCALE_USERS ?? 200),
  largeShare: 0.01,
  largeFactor: 100,
};

/**
 * DynamoDB Locals the users are spread over (SCALE_EMULATORS): each serves every request through one
 * SQLite thread, a ceiling AWS does not have (different partition keys are served by different
 * storage nodes), so one emulator made one user's burst every user's wait (docs/scale.md).
 */
const EMULATORS = Number(process.env.SCALE_EMULATORS ?? 2);

/** Per part, generous against its usual time (docs/scale.md, Figures) on a loaded two-core machine. */
const PART_DEADLINE_MS = { month: 480_000, lag: 180_000, api: 120_000 } as const;
const RUN_DEADLINE_MS = 840_000;
type Part = keyof typeof PART_DEADLINE_MS;

/**
 * The service's own structured log lines and metrics (JSON on the console) are counted, not printed:
 * throttled requests log a warning each, thousands of them. Their count is part of the result.
 */
function quietServiceLogs(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const name of ["log", "warn", "info"] as const) {
    const original = console[name].bind(console);
    console[name] = (...args: unknown[]) => {
      const first = args[0];
      if (typeof first === "string" && first.startsWith("{")) {
        const message = /"message":"([^"]*)"/.exec(first)?.[1] ?? (first.includes('"_aws"') ? "metric" : "other");
        counts[message] = (counts[message] ?? 0) + 1;
        return;
      }
      original(...args);
    };
  }
  return counts;
}

class PastDeadline extends Error {}

/** `run` with a deadline: past it, the part is given up (its figures reported as not measured). */
async function withDeadline<T>(part: Part, run: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new PastDeadline(`part ${part} did not end within ${PART_DEADLINE_MS[part] / 1000} s`)),
      PART_DEADLINE_MS[part],
    );
  });
  try {
    return await Promise.race([run(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

const verdict = (ok: boolean) => (ok ? "met" : "NOT met");

function printMonthStart(monthStart: MonthStartResult, population: Population): void {
  console.log(
    `\n(i) Month start drain (${population.spec.users} users; ${population.due.recurring} recurring, ${population.due.reminders} reminders and their emails; email quota ${SIM_EMAIL_QUOTA}/day; ${monthStart.slowdown}× slower than AWS: every wait ${monthStart.slowdown}× longer, SES's rate and the partition limits ÷ ${monthStart.slowdown}) — ${monthStart.runner}`,
  );
  console.table(
    monthStart.drains.map(({ cpu, outcomes, ...d }) => ({
      ...d,
      "bench CPU % (1 core)": cpu.benchCpuPct,
      "DynamoDB Local CPU % (1 core)": cpu.dynamoCpuPct,
      "machine busy %": cpu.machineBusyPct,
      load: cpu.load1,
    })),
  );
  for (const d of monthStart.drains)
    console.log(`  ${d.workers} worker(s), what the workers did: ${JSON.stringify(d.outcomes)}`);
  console.log(`  1 → 4 workers: ${monthStart.speedup1to4}× faster (goal ≥ 3×): ${verdict(monthStart.speedupGoalMet)}`);
  console.log("(iii) Items read per due item (4-worker copy)");
  console.table(monthStart.reads.map(({ meetsGoal, ...r }) => ({ ...r, met: verdict(meetsGoal) })));
}

function printLag(lag: LagResult): void {
  console.log(
    `\n(ii) A quiet user's lag, alone and while a large user sends ${BURST} invoices at ${round(BURST_PER_SECOND, 1)}/s to a receiver answering 200 after ${SLOW_RECEIVER_MS} ms — ${lag.background}`,
  );
  console.table(lag.figures);
  console.log(`  the quiet user's sends refused: ${lag.failedSends}`);
  for (const g of lag.goals)
    console.log(
      `  ${g.kind}: p99 ${g.duringP99Ms} ms during vs ${g.aloneP99Ms} ms alone = ${g.ratio}× (goal ≤ 2×): ${verdict(g.met)}`,
    );
}

function printApi(api: ApiLatencyResult): void {
  console.log(
    `\n(iv) Quiet users' GET latency (${api.quietUsers} users, ${api.quietPerSecond}/s each), alone and beside a noisy user at 10× its limit (${api.slowdown}× slower than AWS: every wait ${api.slowdown}× longer, every rate and limit ÷ ${api.slowdown}; ${api.noisyPerSecond} POST/s, ${api.noisySentPerSecond}/s sent, its thread ${Math.round(api.noisyThreadBusy * 100)} % busy; API concurrency ${api.concurrency}) — ${api.limits}`,
  );
  console.table([
    { phase: "alone", ...api.alone },
    { phase: "with noisy user", ...api.withNoisy },
  ]);
  console.log(`  noisy user's answers: ${JSON.stringify(api.noisyStatuses)}`);
  console.log(
    `  p99 ${api.ratio}× alone, quiet requests throttled ${api.withNoisy.throttled} (goal: ≤ 1.5×, none throttled): ${verdict(api.met)}`,
  );
}

export async function runScale(): Promise<void> {
  // Whatever a part left running, the run ends: the bench never hangs the machine's other work.
  const emulators: RunningDynamo[] = [];
  /** Ends the process, the DynamoDB Locals (child JVMs) with it. */
  const end = async (code: number): Promise<never> => {
    await Promise.race([Promise.all(emulators.map((e) => e.stop())), sleep(10_000)]).catch(() => undefined);
    process.exit(code);
  };
  const stopAll = setTimeout(() => {
    console.error(`scale: the run did not end within ${RUN_DEADLINE_MS / 1000} s; stopping`);
    void end(1);
  }, RUN_DEADLINE_MS);
  stopAll.unref();
  const serviceLogs = quietServiceLogs();
  const begun = performance.now();
  const log = (line: string) => console.error(`[${Math.round((performance.now() - begun) / 1000)} s] ${line}`);
  /**
   * Each part (and each drain of the month start) on emulators of its own, started for it and
   * stopped after it: an emulator that served a part is slower for the next (DynamoDB Local keeps
   * every table's stream records; the API part after the others measured a noisy user's emulator at
   * several times its fresh latency, and the 4-worker drain after the 1- and 2-worker ones of 200
   * users took 69 s instead of 39).
   */
  const onFreshEmulators = <T>(work: (proxy: AwsLikeDynamo) => Promise<T>): Promise<T> =>
    onFreshDynamos(
      EMULATORS,
      async (endpoints) => {
        const proxy = await startAwsLikeDynamo(endpoints, PARTITION_LIMITS, DYNAMO_LATENCY);
        try {
          return await work(proxy);
        } finally {
          await proxy.close();
        }
      },
      emulators,
    );
  const parts = (process.env.SCALE_PARTS ?? "month,lag,api").split(",") as Part[];
  console.log(
    `Scale simulation (parts ${parts.join(", ")}; per partition key ${PARTITION_LIMITS.readUnitsPerSecond} RCU / ${PARTITION_LIMITS.writeUnitsPerSecond} WCU per s = AWS's ÷ ${SCALE.partitionDivisor}; DynamoDB latency ${JSON.stringify(DYNAMO_LATENCY)}; SES ${SES.perSecond}/s, ${SES.latencyMs} ms; PDF ${PDF_DRAW_MS} ms)`,
  );
  const results: Record<string, unknown> = {
    date: new Date().toISOString(),
    node: process.version,
    parts,
    population: POPULATION,
    stated: { partition: PARTITION_LIMITS, latency: DYNAMO_LATENCY, ses: SES, pdfDrawMs: PDF_DRAW_MS, scale: SCALE },
    cpu: {} as Record<string, CpuFigure>,
    serviceLogs,
  };
  const cpu = results.cpu as Record<string, CpuFigure>;
  // Written after each part: a run stopped later keeps what it measured.
  const save = () => {
    mkdirSync("bench", { recursive: true });
    writeFileSync("bench/scale-results.json", JSON.stringify(results, null, 2) + "\n");
  };
  /** A part under its deadline and the CPU meter; its error or deadline is reported, and the run goes on. */
  const runPart = async <T>(part: Part, run: () => Promise<T>): Promise<T | undefined> => {
    const meter = startCpuMeter();
    try {
      return await withDeadline(part, run);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      log(`scale: part ${part} not measured: ${reason}`);
      // What it measured before (a month start's drains so far) stays, marked.
      results[part] = { ...(results[part] ?? {}), notMeasured: reason };
      if (error instanceof PastDeadline) {
        // Its work goes on in this process (workers, the stream reader, senders) and would weigh on
        // the next part's figures: the run ends here, with what it measured saved.
        cpu[part] = meter.stop();
        for (const later of parts.slice(parts.indexOf(part) + 1))
          results[later] = { notMeasured: `not run: part ${part} did not end by its deadline` };
        save();
        log(`scale: the run ends here (${describeCpu(cpu[part])}); saved: bench/scale-results.json`);
        await end(1);
      }
      return undefined;
    } finally {
      cpu[part] = meter.stop();
      log(`scale: part ${part}: ${describeCpu(cpu[part])}`);
      save();
    }
  };
  try {
    if (parts.includes("month")) {
      await runPart("month", async () => {
        log(
          `scale: making ${POPULATION.users} users (${POPULATION.largeShare * 100} % with ${POPULATION.largeFactor}× the median's due items)…`,
        );
        const started = performance.now();
        const population = await onFreshEmulators((proxy) => buildPopulation(proxy.instances[0]!, POPULATION));
        log(
          `scale: population made in ${Math.round((performance.now() - started) / 1000)} s: ${population.items.length} items, due on the 1st ${JSON.stringify(population.due)}`,
        );
        log("scale: (i) month start drained by 1, 2, 4, 8 workers, each on fresh emulators…");
        // SCALE_RUNNER=serial: N overlapping runs of the jobs as whole loops (the "before" shape).
        const runner = process.env.SCALE_RUNNER === "serial" ? serialJobs : fannedOutJobs;
        const monthStart = await measureMonthStart(onFreshEmulators, population, runner, log, (so) => {
          results.month = { due: population.due, partial: true, ...so };
          save();
        });
        results.month = { due: population.due, ...monthStart };
        printMonthStart(monthStart, population);
      });
    }
    if (parts.includes("lag")) {
      await onFreshEmulators((proxy) =>
        runPart("lag", async () => {
          log("scale: (ii) a quiet user's lag, alone and beside a large user's burst…");
          const lag = await measureLag(proxy.instances[0]!, proxy, streamSubscriber, log);
          results.lag = lag;
          printLag(lag);
        }),
      );
    }
    if (parts.includes("api")) {
      await onFreshEmulators((proxy) =>
        runPart("api", async () => {
          log("scale: (iv) a quiet user's API latency, alone and beside a noisy user…");
          // SCALE_LIMITS=none measures the service without per-user limits (the "before" figure).
          const limits = process.env.SCALE_LIMITS === "none" ? noLimits : userLimits;
          const api = await measureApiLatency(proxy, limits, log);
          results.api = api;
          printApi(api);
        }),
      );
    }
    console.log(`\nService log lines (counted, not printed): ${JSON.stringify(serviceLogs)}`);
    save();
    console.log("written: bench/scale-results.json");
  } finally {
    await Promise.all(emulators.map((e) => e.stop()));
  }
  // Whatever still holds a timer or a socket, the run is over.
  process.exit(0);
}
