import { mkdirSync, writeFileSync } from "node:fs";
import { startDynamoLocal } from "@invoicing/local/dynamo";
import { startAwsLikeDynamo } from "./aws-like-dynamo";
import { measureApiLatency, noLimits, userLimits } from "./api-latency";
import { measureLag } from "./lag";
import { measureMonthStart } from "./month-start";
import { buildPopulation, type Population, type PopulationSpec } from "./population";
import { fannedOutJobs, serialJobs, streamSubscriber } from "./runner";
import { type MonthStartResult, SIM_EMAIL_QUOTA } from "./month-start";
import { BURST, BURST_PER_SECOND, SLOW_RECEIVER_MS } from "./lag";
import { DYNAMO_LATENCY, PARTITION_LIMITS, PDF_DRAW_MS, SCALE, SES } from "./sim";

/**
 * `npm run bench -- scale`: the scale simulation (issue 37 item 4, issue 38's API latency goal).
 * A skewed population on DynamoDB Local behind a proxy that throttles per partition key and adds
 * AWS-like latency; prints each figure with its goal, met or not, and writes bench/scale-results.json.
 * SCALE_USERS sets the population's size (default below); everything else is stated in sim.ts.
 */
export const POPULATION: PopulationSpec = {
  users: Number(process.env.SCALE_USERS ?? 40),
  largeShare: 0.01,
  largeFactor: 100,
};

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

export async function runScale(): Promise<void> {
  const serviceLogs = quietServiceLogs();
  const dynamo = await startDynamoLocal();
  const proxy = await startAwsLikeDynamo(dynamo.endpoint, PARTITION_LIMITS, DYNAMO_LATENCY);
  const log = (line: string) => console.error(line);
  try {
    const parts = (process.env.SCALE_PARTS ?? "month,lag,api").split(",");
    let population: Population | undefined;
    let monthStart: MonthStartResult | undefined;
    if (parts.includes("month")) {
      log(
        `scale: making ${POPULATION.users} users (${POPULATION.largeShare * 100} % with ${POPULATION.largeFactor}× the median's due items)…`,
      );
      const started = performance.now();
      population = await buildPopulation(dynamo.endpoint, POPULATION);
      log(
        `scale: population made in ${Math.round((performance.now() - started) / 1000)} s: ${population.items.length} items, due on the 1st ${JSON.stringify(population.due)}`,
      );
      log("scale: (i) month start drained by 1, 2, 4, 8 workers…");
      // SCALE_RUNNER=serial: N overlapping runs of the jobs as whole loops (the "before" shape).
      const runner = process.env.SCALE_RUNNER === "serial" ? serialJobs : fannedOutJobs;
      monthStart = await measureMonthStart(dynamo.endpoint, proxy, population, runner, log);
      // Each part's figures as soon as it ends: a run stopped later keeps them.
      log(`scale: (i) and (iii): ${JSON.stringify(monthStart)}`);
    }
    log("scale: (ii) a quiet user's lag, alone and beside a large user's burst…");
    const lag = parts.includes("lag") ? await measureLag(dynamo.endpoint, proxy, streamSubscriber, log) : undefined;
    if (lag) log(`scale: (ii): ${JSON.stringify(lag)}`);
    log("scale: (iv) a quiet user's API latency, alone and beside a noisy user…");
    // SCALE_LIMITS=none measures the service without per-user limits (the "before" figure).
    const limits = process.env.SCALE_LIMITS === "none" ? noLimits : userLimits;
    const api = parts.includes("api") ? await measureApiLatency(dynamo.endpoint, proxy, limits, log) : undefined;

    const verdict = (ok: boolean) => (ok ? "met" : "NOT met");
    console.log(
      `\nScale simulation (${JSON.stringify(POPULATION)}; per partition key ${PARTITION_LIMITS.readUnitsPerSecond} RCU / ${PARTITION_LIMITS.writeUnitsPerSecond} WCU per s = AWS's ÷ ${SCALE.partitionDivisor}; DynamoDB latency ${JSON.stringify(DYNAMO_LATENCY)}; SES ${SES.perSecond}/s, ${SES.latencyMs} ms; PDF ${PDF_DRAW_MS} ms)`,
    );
    if (monthStart && population) {
      console.log(
        `(i) Month start drain (${population.due.recurring} recurring, ${population.due.reminders} reminders and their emails; email quota ${SIM_EMAIL_QUOTA}/day) — ${monthStart.runner}`,
      );
      console.table(monthStart.drains);
      console.log(
        `  1 → 4 workers: ${monthStart.speedup1to4}× faster (goal ≥ 3×): ${verdict(monthStart.speedupGoalMet)}`,
      );
      console.log("(iii) Items read per due item (4-worker copy)");
      console.table(monthStart.reads.map(({ meetsGoal, ...r }) => ({ ...r, met: verdict(meetsGoal) })));
    }
    if (lag) {
      console.log(
        `(ii) A quiet user's lag, alone and while a large user sends ${BURST} invoices at ${BURST_PER_SECOND}/s to a receiver answering 200 after ${SLOW_RECEIVER_MS} ms — ${lag.background}`,
      );
      console.table(lag.figures);
      for (const g of lag.goals)
        console.log(
          `  ${g.kind}: p99 ${g.duringP99Ms} ms during vs ${g.aloneP99Ms} ms alone = ${g.ratio}× (goal ≤ 2×): ${verdict(g.met)}`,
        );
    }
    if (api) {
      console.log(
        `(iv) A quiet user's GET latency, alone and beside a noisy user at 10× its limit (${api.noisyPerSecond} POST/s; API concurrency ${api.concurrency}) — ${api.limits}`,
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

    console.log(`Service log lines (counted, not printed): ${JSON.stringify(serviceLogs)}`);
    mkdirSync("bench", { recursive: true });
    const results = {
      date: new Date().toISOString(),
      node: process.version,
      population: POPULATION,
      stated: { partition: PARTITION_LIMITS, latency: DYNAMO_LATENCY, ses: SES, pdfDrawMs: PDF_DRAW_MS, scale: SCALE },
      monthStart,
      lag,
      api,
      serviceLogs,
    };
    writeFileSync("bench/scale-results.json", JSON.stringify(results, null, 2) + "\n");
    console.log("written: bench/scale-results.json");
  } finally {
    await proxy.close();
    await dynamo.stop();
  }
}
