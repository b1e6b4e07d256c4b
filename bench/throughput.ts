import "@invoicing/local/quiet-sdk";
import { type ChildProcess, fork } from "node:child_process";
import { mkdirSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { request } from "../test/support/env";
import { createWorld } from "./world";

/**
 * Requests per second of GET /invoices/{id} through the server on DynamoDB Local, against its floor:
 * a bare Hono server doing the same DynamoDB work a GET must do (bench/baseline/read.ts: one
 * consistent BatchGetItem of the key item and the invoice record, and beside it the one UpdateItem
 * of the user's request limit) on the same HTTP stack
 * (@hono/node-server, core's DynamoDB client), on the same table and items. Goal ≥ 0.9×, with CPU
 * per request ≤ 1.1× the floor's.
 *
 * Each server runs in a process of its own (bench/throughput-server.ts), so its CPU per request is
 * its own process's CPU time (process.cpuUsage, asked over IPC before and after each slice), not
 * the load generator's. The machine's two cores are shared with DynamoDB Local's JVM, this load
 * generator and whatever else runs: so the two servers take turns in short slices, ROUNDS rounds
 * (AB BA AB …, so neither always follows the other), a busy moment slows one round of both rather
 * than one whole measurement, and the figure is the median of the per-round ratios, with its spread.
 * Loops are bounded in time and count, on loopback only.
 *
 * `tsx bench/throughput.ts` runs just this part; with BENCH_CPU_PROF=<dir> both servers profile the
 * measured rounds (V8's CPU profiler, as `node --cpu-prof`) into <dir>/api.cpuprofile and
 * <dir>/baseline.cpuprofile (open them in Chrome's DevTools).
 */
interface ThroughputRound {
  apiRps: number;
  baselineRps: number;
  ratio: number;
  apiCpuUs: number;
  baselineCpuUs: number;
}

interface ThroughputFigure {
  concurrency: number;
  rounds: ThroughputRound[];
  secondsPerSlice: number;
  /** Medians over the rounds. */
  apiRps: number;
  baselineRps: number;
  /** Median of the per-round ratios, and their spread. */
  ratio: number;
  ratioMin: number;
  ratioMax: number;
  ratioIqr: [number, number];
  /** Median over the rounds of each server process's CPU time per request (user + system). */
  apiCpuUs: number;
  baselineCpuUs: number;
  cpuRatio: number;
  /** Body bytes of one answer of each: the same record, shaped (ours) or as stored (the floor). */
  apiBodyBytes: number;
  baselineBodyBytes: number;
  goal: string;
  meetsGoal: boolean;
}

const CONCURRENCY = 8;
const SECONDS = 1;
const ROUNDS = 7;
const WARMUP_REQUESTS = 400;
const MAX_REQUESTS = 100_000;

interface Server {
  base: string;
  /** Starts the CPU profiler of a server started with a profile directory (no-op otherwise). */
  profile(): void;
  cpuUs(): Promise<number>;
  stop(): Promise<void>;
}

const SERVER_ENTRY = fileURLToPath(new URL("./throughput-server.ts", import.meta.url));

async function startServer(role: "api" | "baseline", env: NodeJS.ProcessEnv, profileDir?: string): Promise<Server> {
  const profile = profileDir ? { BENCH_CPU_PROF: `${profileDir}/${role}.cpuprofile` } : { BENCH_CPU_PROF: "" };
  // As `npm start` runs: node --import tsx.
  const child: ChildProcess = fork(SERVER_ENTRY, [role], {
    execArgv: ["--import", "tsx"],
    env: { ...env, ...profile },
  });
  const next = <T>(pick: (message: unknown) => T | undefined): Promise<T> =>
    new Promise((resolve, reject) => {
      const onMessage = (message: unknown) => {
        const value = pick(message);
        if (value === undefined) return;
        child.off("message", onMessage);
        child.off("exit", onExit);
        resolve(value);
      };
      const onExit = (code: number | null) => reject(new Error(`the ${role} server exited (${code})`));
      child.on("message", onMessage);
      child.once("exit", onExit);
    });
  const field = (name: string) => (message: unknown) =>
    typeof message === "object" && message !== null && name in message
      ? (message as Record<string, unknown>)[name]
      : undefined;
  const port = (await next(field("port"))) as number;
  return {
    base: `http://127.0.0.1:${port}`,
    profile: () => void child.send("profile"),
    async cpuUs() {
      const answer = next(field("cpu")) as Promise<NodeJS.CpuUsage>;
      child.send("cpu");
      const cpu = await answer;
      return cpu.user + cpu.system;
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.send("stop");
      await exited;
    },
  };
}

/** One GET, its body read; anything but 200 fails the bench (a floor answering 401 is no floor). */
async function get(url: string, headers: Record<string, string>): Promise<number> {
  const res = await fetch(url, { headers });
  const body = await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`);
  return body.byteLength;
}

/** CONCURRENCY clients for SECONDS (or `count` requests): requests done, and per second. */
async function slice(run: () => Promise<unknown>, count = MAX_REQUESTS): Promise<{ done: number; rps: number }> {
  const started = performance.now();
  const deadline = started + SECONDS * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline && done < count) {
        done++;
        await run();
      }
    }),
  );
  return { done, rps: done / ((performance.now() - started) / 1000) };
}

/** One slice of one server, with that server process's CPU time per request in it. */
async function measured(server: Server, run: () => Promise<unknown>): Promise<{ rps: number; cpuUs: number }> {
  const before = await server.cpuUs();
  const { done, rps } = await slice(run);
  return { rps, cpuUs: ((await server.cpuUs()) - before) / done };
}

const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
function median(values: number[]): number {
  const s = sorted(values);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
/** Quartiles by the nearest rank (the 2nd and 6th of 7). */
const quartiles = (values: number[]): [number, number] => {
  const s = sorted(values);
  return [s[Math.floor((s.length - 1) / 4)]!, s[Math.ceil((3 * (s.length - 1)) / 4)]!];
};
const round2 = (value: number) => Math.round(value * 100) / 100;

export async function measureThroughput(endpoint: string, profileDir?: string): Promise<ThroughputFigure> {
  const world = await createWorld(endpoint);
  world.meter.detach();
  const auth = { Authorization: `Bearer ${world.key}` };
  const client = await request(world.app, "POST", "/clients", { name: "T" }, auth);
  const invoice = await request(
    world.app,
    "POST",
    "/invoices",
    { clientId: client.body.id, lineItems: [{ description: "x", unitPrice: "1.00" }] },
    auth,
  );
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const env = {
    ...process.env,
    DYNAMODB_ENDPOINT: endpoint,
    TABLE_NAME: world.deps.db.table,
    // The region the bench's tables were made in (test/support/table.ts).
    AWS_REGION: "local",
    // One user at the bench's full rate: the per-user limit stays on (its write is part of every
    // GET measured, as deployed) but set far above the rate, so no request is refused.
    API_RATE_LIMIT: "1000000",
  };
  const [api, baseline] = await Promise.all([
    startServer("api", env, profileDir),
    startServer("baseline", env, profileDir),
  ]);
  try {
    const path = `/invoices/${invoice.body.id}`;
    const apiRun = () => get(api.base + path, auth);
    const baselineRun = () => get(baseline.base + path, auth);
    const apiBodyBytes = await apiRun();
    const baselineBodyBytes = await baselineRun();
    // Warm both (JIT, connections, our key's first lastUsedAt refresh) before measuring.
    await slice(apiRun, WARMUP_REQUESTS);
    await slice(baselineRun, WARMUP_REQUESTS);
    api.profile();
    baseline.profile();
    const rounds: ThroughputRound[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const apiFirst = i % 2 === 0;
      const first = apiFirst ? await measured(api, apiRun) : await measured(baseline, baselineRun);
      const second = apiFirst ? await measured(baseline, baselineRun) : await measured(api, apiRun);
      const [ours, floor] = apiFirst ? [first, second] : [second, first];
      rounds.push({
        apiRps: Math.round(ours.rps),
        baselineRps: Math.round(floor.rps),
        ratio: round2(ours.rps / floor.rps),
        apiCpuUs: Math.round(ours.cpuUs),
        baselineCpuUs: Math.round(floor.cpuUs),
      });
    }
    const ratios = rounds.map((r) => r.ratio);
    const ratio = round2(median(ratios));
    const apiCpuUs = Math.round(median(rounds.map((r) => r.apiCpuUs)));
    const baselineCpuUs = Math.round(median(rounds.map((r) => r.baselineCpuUs)));
    const cpuRatio = round2(apiCpuUs / baselineCpuUs);
    return {
      concurrency: CONCURRENCY,
      rounds,
      secondsPerSlice: SECONDS,
      apiRps: Math.round(median(rounds.map((r) => r.apiRps))),
      baselineRps: Math.round(median(rounds.map((r) => r.baselineRps))),
      ratio,
      ratioMin: Math.min(...ratios),
      ratioMax: Math.max(...ratios),
      ratioIqr: quartiles(ratios),
      apiCpuUs,
      baselineCpuUs,
      cpuRatio,
      apiBodyBytes,
      baselineBodyBytes,
      goal: "≥ 0.9× the floor, CPU per request ≤ 1.1×",
      meetsGoal: ratio >= 0.9 && cpuRatio <= 1.1,
    };
  } finally {
    await Promise.all([api.stop(), baseline.stop()]);
  }
}

/** `tsx bench/throughput.ts`: this part alone, on a DynamoDB Local of its own. */
async function main(): Promise<void> {
  const { startDynamoLocal } = await import("@invoicing/local/dynamo");
  const dynamo = await startDynamoLocal();
  try {
    const figure = await measureThroughput(dynamo.endpoint, process.env.BENCH_CPU_PROF);
    printThroughput(figure);
  } finally {
    await dynamo.stop();
  }
}

export function printThroughput(figure: ThroughputFigure): void {
  const { rounds } = figure;
  console.log(
    `Throughput: GET /invoices/{id} vs a bare Hono server doing the same DynamoDB work (a BatchGetItem of the key item and the record, and beside it the request limit's UpdateItem; same HTTP stack), ${figure.concurrency} concurrent, ${rounds.length} interleaved rounds of ${figure.secondsPerSlice} s each`,
  );
  console.table(rounds);
  console.log(
    `  median ratio ${figure.ratio}× (min–max ${figure.ratioMin}–${figure.ratioMax}, IQR ${figure.ratioIqr.join("–")}); CPU per request ${figure.apiCpuUs} vs ${figure.baselineCpuUs} µs = ${figure.cpuRatio}×; goal ${figure.goal}: ${figure.meetsGoal ? "met" : "NOT met"}`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
