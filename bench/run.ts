import "@invoicing/local/quiet-sdk";
import { mkdirSync, writeFileSync } from "node:fs";
import { startDynamoLocal } from "@invoicing/local/dynamo";
import { measureCalls } from "./calls";
import { measureInit } from "./init";
import { measureJobs } from "./jobs";
import { measureThroughput } from "./throughput";
import { createWorld } from "./world";

/**
 * `npm run bench`: what costs money and time on AWS, measured side by side with its floor in one
 * run, on an in-memory DynamoDB Local. Prints tables and writes bench/results.json.
 * Figures, not assertions: the README says which goals are met.
 */
async function main() {
  const dynamo = await startDynamoLocal();
  try {
    const world = await createWorld(dynamo.endpoint);
    console.error("bench: DynamoDB requests per API call…");
    const calls = await measureCalls(world.app, world.meter, world.key);
    console.error("bench: handler init and bundle size…");
    const init = await measureInit();
    console.error("bench: throughput…");
    const throughput = await measureThroughput(dynamo.endpoint);
    console.error("bench: job cost against table size…");
    const jobs = await measureJobs(dynamo.endpoint);

    const verdict = (ok: boolean | undefined) => (ok === undefined ? "" : ok ? "✓" : "✗");
    console.log("\nDynamoDB requests per API call (auth included)");
    console.table(calls.map((c) => ({ operation: c.operation, requests: c.requests, "capacity units": c.capacityUnits, "items read": c.itemsRead, goal: c.goal ?? "", met: verdict(c.meetsGoal) })));
    console.log("Lambda init: API bundle vs a bare Hono + lib-dynamodb baseline");
    console.table(init.rows.map((r) => ({ ...r, met: verdict(r.meetsGoal) })));
    console.log("Throughput: GET /invoices/{id} vs raw SDK GetItem");
    console.table([{ ...throughput, met: verdict(throughput.meetsGoal) }]);
    console.log("Jobs: items read with 10 due among 2,500 waiting per job (10,000 in all)");
    console.table(jobs.map((j) => ({ ...j, met: verdict(j.meetsGoal) })));

    mkdirSync("bench", { recursive: true });
    const results = { date: new Date().toISOString(), node: process.version, calls, init, throughput, jobs };
    writeFileSync("bench/results.json", JSON.stringify(results, null, 2) + "\n");
    console.log("written: bench/results.json");
  } finally {
    await dynamo.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
