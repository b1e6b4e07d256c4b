import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { httpApiEvent } from "../test/deploy/lambda";
import { bundleFunctions } from "../scripts/bundle.mjs";
import { evaluateInfra, functionsOf } from "../scripts/infra.mjs";
import { createWorld } from "./world";
import { request } from "../test/support/env";
import { startDynamoLocal } from "@invoicing/local/dynamo";

/**
 * A cold start as a user sees it (issue 41): a fresh Node process imports a Lambda bundle (init) and
 * answers one routed request (GET /invoices/{id} with a valid key, against DynamoDB Local), then
 * exits — the API as infra builds it, and the bare baseline (bench/baseline: Hono + one GetItem,
 * GET /items/{id}).
 *
 * Two figures, each taken in fresh processes, interleaved so the shared machine's load falls on all alike:
 * - instructions (valgrind's callgrind: the whole process, Node's own start included, and that
 *   start alone as "node floor"), which count the work whatever else the machine does;
 * - CPU ms (process.cpuUsage from before the import to the response), median of RUNS.
 * This judged a lazy route table (route modules loaded at the first routed request, from a table
 * built in at build time, with code splitting) against the eager routes: 2 % fewer instructions and
 * CPU ms, short of the 10 % it had to win, so it was removed (docs/benchmarks.md).
 */
export interface ColdStartRow {
  build: string;
  /** Instructions of the whole process (callgrind "Collected"), median of the valgrind runs. */
  instructions: number;
  /** The same, less Node's start alone: what init and the first response cost. */
  instructionsAboveFloor: number;
  cpuMs: number;
  status: number;
  /** The code its import loads (scripts/bundle.mjs `bytes`); 0 for the floor. */
  bytes: number;
}

const RUNS = 7;
const VALGRIND_RUNS = 1;
const runner = join(import.meta.dirname, "coldstart", "cold-start.mjs");

export async function measureColdStart(endpoint: string): Promise<ColdStartRow[]> {
  const world = await createWorld(endpoint);
  const auth = { Authorization: `Bearer ${world.key}` };
  const client = await request(world.app, "POST", "/clients", { name: "Cold", email: "cold@example.com" }, auth);
  const line = { description: "Consulting", quantity: "3", unitPrice: "19.99", taxRate: "0.0825" };
  const invoice = await request(world.app, "POST", "/invoices", { clientId: client.body.id, lineItems: [line] }, auth);
  if (invoice.status !== 201) throw new Error(`creating the invoice answered ${invoice.status}`);
  const tableName = world.deps.db.table;

  const outdir = mkdtempSync(join(tmpdir(), "bench-coldstart-"));
  try {
    const infra = await evaluateInfra({ stage: "bench", env: { EMAIL_SENDER: "bench@example.com" } });
    const api = functionsOf(infra).find((fn) => fn.handler === "packages/functions/src/lambda/api.handler")!;
    const built = await bundleFunctions(
      [
        { id: "api", handler: api.handler, runtime: api.runtime, nodejs: api.nodejs },
        { id: "baseline", handler: "bench/baseline/handler.handler", runtime: api.runtime, nodejs: api.nodejs },
      ],
      outdir,
    );
    const invoiceEvent = httpApiEvent("GET", `/invoices/${invoice.body.id}`, { headers: auth });
    const cases = [
      { build: "node floor (no import)", bundle: "-", event: invoiceEvent, bytes: 0 },
      ...built.map((b) => ({
        build: b.id,
        bytes: b.bytes,
        bundle: b.bundle,
        event: b.id === "baseline" ? httpApiEvent("GET", "/items/some-id") : invoiceEvent,
      })),
    ].map((c, i) => {
      const eventFile = join(outdir, `event-${i}.json`);
      writeFileSync(eventFile, JSON.stringify(c.event));
      return { ...c, eventFile };
    });
    const env = {
      PATH: process.env.PATH ?? "",
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: "local",
      AWS_SECRET_ACCESS_KEY: "local",
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
      DYNAMODB_ENDPOINT: endpoint,
      AWS_ENDPOINT_URL_DYNAMODB: endpoint,
      TABLE_NAME: tableName,
      SST_RESOURCE_App: JSON.stringify({ name: "invoicing", stage: "bench" }),
      SST_RESOURCE_Table: JSON.stringify({ name: tableName, type: "sst.aws.Dynamo" }),
      SST_RESOURCE_Api: JSON.stringify({ url: "https://api.example.com", type: "sst.aws.ApiGatewayV2" }),
      SST_RESOURCE_StripeSecretKey: JSON.stringify({ value: "", type: "sst.sst.Secret" }),
      SST_RESOURCE_StripeWebhookSecret: JSON.stringify({ value: "", type: "sst.sst.Secret" }),
      SST_RESOURCE_CardPayments: JSON.stringify({ enabled: false, type: "sst.sst.Linkable" }),
    };
    const run = (c: (typeof cases)[number], valgrind: boolean) => {
      const args = [runner, c.bundle, c.eventFile];
      const out = valgrind
        ? spawnSync("valgrind", ["--tool=callgrind", "--callgrind-out-file=/dev/null", process.execPath, ...args], {
            encoding: "utf8",
            env,
          })
        : spawnSync(process.execPath, args, { encoding: "utf8", env });
      if (out.status !== 0) throw new Error(`${c.build}: ${out.stderr}`);
      const result = JSON.parse(out.stdout.trim().split("\n").pop()!) as { cpuMs: number; status: number };
      const collected = /Collected : (\d+)/.exec(out.stderr)?.[1];
      return { ...result, instructions: collected ? Number(collected) : 0 };
    };
    const cpu = cases.map(() => [] as number[]);
    const instructions = cases.map(() => [] as number[]);
    const status = cases.map(() => 0);
    for (let round = 0; round < RUNS; round++) {
      for (const [i, c] of cases.entries()) {
        const r = run(c, false);
        cpu[i]!.push(r.cpuMs);
        status[i] = r.status;
      }
    }
    for (let round = 0; round < VALGRIND_RUNS; round++) {
      for (const [i, c] of cases.entries()) {
        console.error(`bench: callgrind, ${c.build}…`);
        instructions[i]!.push(run(c, true).instructions);
      }
    }
    const floor = median(instructions[0]!);
    return cases.map((c, i) => ({
      build: c.build,
      instructions: median(instructions[i]!),
      instructionsAboveFloor: median(instructions[i]!) - floor,
      cpuMs: Math.round(median(cpu[i]!) * 10) / 10,
      status: status[i]!,
      bytes: c.bytes,
    }));
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/** The table, each build's work against the baseline's. */
export function printColdStart(rows: ColdStartRow[]): void {
  const base = rows.find((r) => r.build === "baseline")!;
  console.log("Cold start: a fresh process's init and first routed response (instructions: callgrind; CPU ms: median)");
  console.table(
    rows.map((r) => ({
      build: r.build,
      status: r.status,
      KiB: Math.round(r.bytes / 1024),
      "M instructions": Math.round(r.instructions / 1e6),
      "M above floor": Math.round(r.instructionsAboveFloor / 1e6),
      "× baseline (above floor)": Math.round((r.instructionsAboveFloor / base.instructionsAboveFloor) * 100) / 100,
      "CPU ms": r.cpuMs,
      "× baseline (CPU)": Math.round((r.cpuMs / base.cpuMs) * 100) / 100,
    })),
  );
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** `npm run bench -- coldstart` (or `npx tsx bench/coldstart.ts`): this part alone, on its own DynamoDB Local. */
if (import.meta.url === `file://${process.argv[1]}`) {
  const dynamo = await startDynamoLocal();
  try {
    printColdStart(await measureColdStart(dynamo.endpoint));
  } finally {
    await dynamo.stop();
  }
}
