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
 *
 * "Size" is the code a cold import loads: the bundle, and with code splitting (the API function,
 * infra/api.ts) the chunks it imports statically; `codeBytes` is all the code in the zip, chunks
 * loaded at a first request included. The API function is compared with a baseline built with its
 * own settings (code splitting: the SDK's credential providers are chunks there too), the others with
 * the baseline built as they are (no splitting); both are measured in the same interleaved rounds.
 */
export interface InitRow {
  function: string;
  handler: string;
  /** The code a cold import loads (scripts/bundle.mjs `bytes`). */
  bytes: number;
  /** All the code in the function's zip, chunks loaded at a first request included. */
  codeBytes: number;
  /** The baseline this row is compared with. */
  baseline: string;
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
    const handler = "bench/baseline/handler.handler";
    const plain = declared.find((fn) => !fn.nodejs?.splitting)?.nodejs;
    const split = declared.find((fn) => fn.nodejs?.splitting)?.nodejs;
    const extra = [
      { id: "Baseline", handler, runtime, nodejs: plain },
      ...(split ? [{ id: "Baseline split", handler, runtime, nodejs: { ...split, esbuild: undefined } }] : []),
    ];
    const built = await bundleFunctions([...extra, ...declared], outdir);
    const ms = coldImportMs(built.map((b) => b.bundle));
    const baselineOf = (splitting: boolean) => {
      const i = built.findIndex((b) => b.id === (splitting && split ? "Baseline split" : "Baseline"));
      return { built: built[i]!, ms: ms[i]!.cpu };
    };
    const rows = built.map((b, i): InitRow => {
      const isBaseline = b.id.startsWith("Baseline");
      const splitting = b.id === "Baseline split" || declared.find((fn) => fn.id === b.id)?.nodejs?.splitting === true;
      const base = baselineOf(splitting);
      const row: InitRow = {
        function: isBaseline ? `baseline (Hono + lib-dynamodb GetItem${splitting ? ", code splitting" : ""})` : b.id,
        handler: b.handler,
        bytes: b.bytes,
        codeBytes: b.codeBytes,
        baseline: base.built.id,
        coldImportMs: ms[i]!.cpu,
        coldImportWallMs: ms[i]!.wall,
        sizeRatio: round(b.bytes / base.built.bytes),
        initRatio: round(ms[i]!.cpu / base.ms),
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
