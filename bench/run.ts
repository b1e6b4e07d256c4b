import "@invoicing/local/quiet-sdk";
import { mkdirSync, writeFileSync } from "node:fs";
import { onFreshDynamo, startDynamoLocal } from "@invoicing/local/dynamo";
import { measureFirstFacturX, measureLogo, measurePayLink } from "./abuse";
import { measureCalls } from "./calls";
import { measureColdStart, printColdStart } from "./coldstart";
import { ASSUMPTIONS, measureCost, PRICES } from "./cost";
import { measureInit } from "./init";
import { measureConcurrentFinalizes } from "./finalize";
import { measureJobs } from "./jobs";
import { measureRender } from "./render";
import { measureReports } from "./reports";
import { measureThroughput, printThroughput } from "./throughput";
import { runScale } from "./scale/scale";
import { measureWriteUnits, printWriteUnits } from "./write-units";
import { createWorld } from "./world";

/**
 * `npm run bench`: what costs money and time on AWS, measured side by side with its floor in one
 * run, on an in-memory DynamoDB Local. Prints tables (each goal with its baseline and met / not
 * met) and writes bench/results.json. Figures, not assertions: docs/benchmarks.md says which goals are met.
 */
async function main() {
  const dynamo = await startDynamoLocal();
  try {
    // `npm run bench -- coldstart`: that part alone (callgrind runs take minutes on a shared machine).
    if (process.argv[2] === "coldstart") return printColdStart(await measureColdStart(dynamo.endpoint));
    const world = await createWorld(dynamo.endpoint);
    console.error("bench: DynamoDB requests per API call…");
    const calls = await measureCalls(world.app, world.meter, world.key);
    console.error("bench: rendering the largest valid invoice…");
    const render = await measureRender(await createWorld(dynamo.endpoint));
    console.error("bench: every function's bundle size and init…");
    const init = await measureInit();
    console.error("bench: a cold start's init and first routed response (API vs baseline)…");
    const coldStart = await measureColdStart(dynamo.endpoint);
    // Each part from here on its own fresh DynamoDB Local: an instance that served the parts before
    // is slower for the next (it keeps every table's stream records, and its stream reads slow with
    // them: the reports part's backfill, which reads the stream, did not end in 15 minutes on the
    // instance the earlier parts had used).
    console.error("bench: throughput…");
    const throughput = await onFreshDynamo(measureThroughput);
    console.error("bench: job cost against table size…");
    const jobs = await onFreshDynamo(measureJobs);
    console.error("bench: N concurrent finalizes of one user…");
    const finalizes = await onFreshDynamo(measureConcurrentFinalizes);
    console.error("bench: reports (10 and 10,000 invoices, the subscriber's work per change)…");
    const reports = await onFreshDynamo(measureReports);
    console.error("bench: issue 29's abuse paths (logo check, pay link, first Factur-X)…");
    const logo = measureLogo();
    const payLink = await onFreshDynamo(measurePayLink);
    const facturX = await onFreshDynamo(measureFirstFacturX);
    console.error("bench: cost at on-demand prices…");
    const cost = await onFreshDynamo((endpoint) => measureCost(endpoint, init.rows));
    console.error("bench: write units per invoice lifecycle and per email, by index projection…");
    const writeUnits = await onFreshDynamo(measureWriteUnits);
    const verdict = (ok: boolean | undefined) => (ok === undefined ? "" : ok ? "met" : "NOT met");
    console.log("\nDynamoDB requests per API call (auth included)");
    console.table(
      calls.map((c) => ({
        operation: c.operation,
        requests: c.requests,
        "round trips": c.roundTrips,
        "read units": c.readUnits,
        "write units": c.writeUnits,
        "items read": c.itemsRead,
        goal: c.goal ?? "",
        met: verdict(c.meetsGoal),
      })),
    );
    console.log("Lambda init: every function's bundle vs a bare Hono + lib-dynamodb baseline (goal: the API's)");
    console.table(
      init.rows.map((r) => ({
        function: r.function,
        KiB: Math.round(r.bytes / 1024),
        "zip code KiB": Math.round(r.codeBytes / 1024),
        "× size": r.sizeRatio,
        "init CPU ms": r.coldImportMs,
        "(wall ms)": r.coldImportWallMs,
        "× init": r.initRatio,
        goal: r.goal ?? "",
        met: verdict(r.meetsGoal),
      })),
    );
    printColdStart(coldStart);
    printThroughput(throughput);
    console.log(
      "Render time of the largest valid invoice (100 × 1000-character words, 5000-character notes and terms)",
    );
    console.table(render.map((r) => ({ ...r, met: verdict(r.meetsGoal) })));
    console.log("Logo check of hostile PNGs (PUT /profile/logo after the key; CPU ms, median)");
    console.table(logo);
    console.log(`Pay link: card processor calls per ${payLink.opens} opens of one invoice's link`);
    console.table([payLink.processorCalls]);
    console.log(
      "First Factur-X of a cold Documents function (its bundle in a fresh process; goal on CPU ms: wall on this shared machine mostly measures the wait for a core)",
    );
    console.table(facturX.map((r) => ({ ...r, met: verdict(r.meetsGoal) })));
    console.log("Jobs: items read with 10 due among 2,500 waiting per job (10,000 in all)");
    console.table(jobs.map((j) => ({ ...j, met: verdict(j.meetsGoal) })));
    console.log("Many writers on one user: N concurrent finalizes (one gapless counter item)");
    console.table(finalizes);
    console.log("Reports: items read with 10 and with 10,000 invoices, 10 open in both (goal: equal)");
    console.table(reports.reads.map((r) => ({ ...r })));
    console.log(`  goal ${verdict(reports.readsGoalMet)}; backfill of 10,000: ${JSON.stringify(reports.backfill)}`);
    console.log("Reports: the stream subscriber's extra work per change (countChange on the change's records)");
    console.table(reports.changes.map((c) => ({ ...c })));
    console.log(
      `Cost at on-demand prices (${PRICES.region}; ${JSON.stringify(PRICES)}; assumed ${JSON.stringify(ASSUMPTIONS)})`,
    );
    console.table(
      cost.map((c) => ({
        scenario: c.scenario,
        "API requests": c.apiRequests,
        "round trips": c.roundTrips,
        "read units": c.readUnits,
        "write units": c.writeUnits,
        "CPU ms": c.cpuMs,
        "billed ms": c.billedMs,
        "DynamoDB $": c.dollars.dynamo,
        "Lambda $": c.dollars.lambda,
        "API Gateway $": c.dollars.apiGateway,
        "total $": c.dollars.total,
      })),
    );
    printWriteUnits(writeUnits);

    mkdirSync("bench", { recursive: true });
    const results = {
      date: new Date().toISOString(),
      node: process.version,
      calls,
      render,
      init,
      coldStart,
      throughput,
      jobs,
      finalizes,
      reports,
      issue29: { logo, payLink, facturX },
      cost: { prices: PRICES, assumptions: ASSUMPTIONS, figures: cost },
      writeUnits,
    };
    writeFileSync("bench/results.json", JSON.stringify(results, null, 2) + "\n");
    console.log("written: bench/results.json");
  } finally {
    await dynamo.stop();
  }
}

/** `npm run bench -- units`: the write units alone (a few seconds). */
async function runWriteUnits() {
  const dynamo = await startDynamoLocal();
  try {
    printWriteUnits(await measureWriteUnits(dynamo.endpoint));
  } finally {
    await dynamo.stop();
  }
}

// `npm run bench -- scale`: the scale simulation alone (a few minutes; not part of the whole bench).
const part = process.argv[2];
const run =
  part === "scale"
    ? runScale
    : part === "units"
      ? runWriteUnits
      : part === undefined || part === "coldstart"
        ? main
        : undefined;
if (!run) {
  console.error(`unknown bench part "${part}": npm run bench [-- scale | -- units | -- coldstart]`);
  process.exit(2);
}
run().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
