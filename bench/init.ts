import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lambdaRuntime } from "../infra/runtime";
import { bundleFunction } from "../scripts/bundle.mjs";

/**
 * Lambda init: the API bundle, built exactly as SST builds it, against a baseline built the same way
 * (bench/baseline: bare Hono + lib-dynamodb doing one GetItem). Size in bytes, and cold import time
 * (a fresh Node process importing the bundle: what Lambda's init phase does), median of RUNS.
 * Goals: ≤ 1.3× size, ≤ 1.2× init.
 */
export interface InitRow {
  bundle: string;
  bytes: number;
  coldImportMs: number;
  sizeRatio?: number;
  initRatio?: number;
  goal?: string;
  meetsGoal?: boolean;
}

const RUNS = 9;

function coldImportMs(bundle: string): number {
  const script = "const t=performance.now();await import(process.argv[1]);console.log(performance.now()-t)";
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const out = spawnSync(process.execPath, ["--input-type=module", "-e", script, bundle], {
      encoding: "utf8",
      env: {
        PATH: process.env.PATH,
        AWS_REGION: "us-east-1",
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
        SST_RESOURCE_App: JSON.stringify({ name: "invoicing", stage: "bench" }),
        SST_RESOURCE_Table: JSON.stringify({ name: "bench", type: "sst.aws.Dynamo" }),
      },
    });
    if (out.status !== 0) throw new Error(`importing ${bundle} failed: ${out.stderr}`);
    times.push(Number(out.stdout.trim().split("\n").pop()));
  }
  times.sort((a, b) => a - b);
  return Math.round(times[Math.floor(times.length / 2)]! * 10) / 10;
}

export async function measureInit(): Promise<{ rows: InitRow[] }> {
  const outdir = mkdtempSync(join(tmpdir(), "bench-bundles-"));
  try {
    // The runtime and nodejs settings every deployed function has (minified, es2023).
    const baseline = await bundleFunction({ id: "Baseline", handler: "bench/baseline/handler.handler", ...lambdaRuntime }, outdir);
    const api = await bundleFunction({ id: "Api", handler: "packages/functions/src/api.handler", ...lambdaRuntime }, outdir);
    const baseRow: InitRow = { bundle: "baseline (Hono + lib-dynamodb GetItem)", bytes: baseline.bytes, coldImportMs: coldImportMs(baseline.bundle) };
    const apiMs = coldImportMs(api.bundle);
    const sizeRatio = round(api.bytes / baseline.bytes);
    const initRatio = round(apiMs / baseRow.coldImportMs);
    const apiRow: InitRow = {
      bundle: "API (packages/functions/src/api.handler)",
      bytes: api.bytes,
      coldImportMs: apiMs,
      sizeRatio,
      initRatio,
      goal: "size ≤ 1.3×, init ≤ 1.2×",
      meetsGoal: sizeRatio <= 1.3 && initRatio <= 1.2,
    };
    return { rows: [baseRow, apiRow] };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

const round = (n: number) => Math.round(n * 100) / 100;
