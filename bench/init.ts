import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundleFunctions } from "../scripts/bundle.mjs";
import { evaluateInfra, functionsOf } from "../scripts/infra.mjs";

/**
 * Lambda init of EVERY function infra declares, each bundle built exactly as SST builds it, against
 * a baseline built the same way (bench/baseline: bare Hono + lib-dynamodb doing one GetItem). Size
 * in bytes (counted), and the cold import (a fresh Node process importing the bundle: what Lambda's
 * init phase does) as CPU time, median of RUNS: the machine's 2 cores are shared with other work,
 * and wall time then measures the queue for a core more than the import (medians moved ±50 %
 * between runs, CPU time by a few %); Lambda's init runs on its own vCPU share, so CPU time is what
 * it pays. The wall-time median is printed beside it for reference.
 * Goals for the API function: ≤ 1.3× size, ≤ 1.2× init.
 */
export interface InitRow {
  function: string;
  handler: string;
  bytes: number;
  /** CPU time of the cold import (ms, median): the init figure the goal reads. */
  coldImportMs: number;
  /** Wall time of the same imports (ms, median), for reference. */
  coldImportWallMs: number;
  sizeRatio: number;
  initRatio: number;
  goal?: string;
  meetsGoal?: boolean;
}

const RUNS = 11;
const SIZE_GOAL = 1.3;
const INIT_GOAL = 1.2;

/** One cold import of a bundle in a fresh Node process: CPU and wall ms (what Lambda's init phase does). */
function coldImportOnce(bundle: string): { cpu: number; wall: number } {
  const script = [
    "const c=process.cpuUsage(),t=performance.now();await import(process.argv[1]);",
    "const u=process.cpuUsage(c);console.log((u.user+u.system)/1000, performance.now()-t)",
  ].join("");
  const out = spawnSync(process.execPath, ["--input-type=module", "-e", script, bundle], {
    encoding: "utf8",
    env: {
      PATH: process.env.PATH,
      AWS_REGION: "us-east-1",
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
      SST_RESOURCE_App: JSON.stringify({ name: "invoicing", stage: "bench" }),
      SST_RESOURCE_Table: JSON.stringify({ name: "bench", type: "sst.aws.Dynamo" }),
      SST_RESOURCE_Api: JSON.stringify({ url: "https://api.example.com", type: "sst.aws.ApiGatewayV2" }),
      SST_RESOURCE_StripeSecretKey: JSON.stringify({ value: "", type: "sst.sst.Secret" }),
      SST_RESOURCE_StripeWebhookSecret: JSON.stringify({ value: "", type: "sst.sst.Secret" }),
    },
  });
  if (out.status !== 0) throw new Error(`importing ${bundle} failed: ${out.stderr}`);
  const [cpu, wall] = out.stdout.trim().split("\n").pop()!.split(" ").map(Number);
  return { cpu: cpu!, wall: wall! };
}

/**
 * Median cold import of each bundle. Rounds go over every bundle in turn, so a busy moment of the
 * shared machine slows all of them alike instead of whichever happened to be measured then.
 */
function coldImportMs(bundles: string[]): { cpu: number; wall: number }[] {
  const times = bundles.map(() => [] as { cpu: number; wall: number }[]);
  for (let round = 0; round < RUNS; round++) {
    for (const [i, bundle] of bundles.entries()) times[i]!.push(coldImportOnce(bundle));
  }
  const median = (values: number[]) =>
    Math.round([...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]! * 10) / 10;
  return times.map((t) => ({ cpu: median(t.map((x) => x.cpu)), wall: median(t.map((x) => x.wall)) }));
}

export async function measureInit(): Promise<{ rows: InitRow[] }> {
  const outdir = mkdtempSync(join(tmpdir(), "bench-bundles-"));
  try {
    const infra = await evaluateInfra({ stage: "bench", env: { EMAIL_SENDER: "bench@example.com" } });
    const declared = functionsOf(infra).map((fn) => ({
      id: fn.id,
      handler: fn.handler,
      runtime: fn.runtime,
      nodejs: fn.nodejs,
    }));
    const runtime = declared[0]?.runtime ?? "nodejs22.x";
    const extra = [{ id: "Baseline", handler: "bench/baseline/handler.handler", runtime, nodejs: declared[0]?.nodejs }];
    const built = await bundleFunctions([...extra, ...declared], outdir);
    const baseline = built.find((b) => b.id === "Baseline")!;
    const ms = coldImportMs(built.map((b) => b.bundle));
    const baseMs = ms[built.indexOf(baseline)]!.cpu;
    const rows = built.map((b, i): InitRow => {
      const row: InitRow = {
        function: b.id === "Baseline" ? "baseline (Hono + lib-dynamodb GetItem)" : b.id,
        handler: b.handler,
        bytes: b.bytes,
        coldImportMs: ms[i]!.cpu,
        coldImportWallMs: ms[i]!.wall,
        sizeRatio: round(b.bytes / baseline.bytes),
        initRatio: round(ms[i]!.cpu / baseMs),
      };
      if (b.handler === "packages/functions/src/lambda/api.handler") {
        row.goal = `size ≤ ${SIZE_GOAL}×, init ≤ ${INIT_GOAL}×`;
        row.meetsGoal = row.sizeRatio <= SIZE_GOAL && row.initRatio <= INIT_GOAL;
      }
      return row;
    });
    return { rows };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

const round = (n: number) => Math.round(n * 100) / 100;
