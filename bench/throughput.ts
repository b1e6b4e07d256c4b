import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { Hono } from "hono";
import { entityKey } from "@invoicing/core/db/keys";
import { request } from "../test/support/env";
import { createWorld } from "./world";

/**
 * Requests per second of GET /invoices/{id} through the Node server on DynamoDB Local, against two
 * floors at the same concurrency on the same DynamoDB Local:
 * - the goal's baseline: a bare Hono app doing the same one GetItem of the same invoice, served by
 *   the same HTTP stack (@hono/node-server, fetch as the client) — what we add on top of the stack
 *   is what the ratio shows. Goal ≥ 0.8×.
 * - for reference, a raw-SDK GetItem loop (no HTTP at all).
 * Timed figures on a machine whose 2 cores are shared with DynamoDB Local's JVM and other work: the
 * three loops run in short interleaved slices, ROUNDS each, and each figure is its median slice, so
 * a busy moment slows one slice of each rather than one whole measurement.
 * Loops are bounded in time and count, on loopback only.
 */
interface ThroughputFigure {
  concurrency: number;
  seconds: number;
  apiRps: number;
  bareHonoRps: number;
  rawSdkRps: number;
  ratio: number;
  /**
   * CPU time this process spends per request, in-process (app.request, no HTTP): what our code
   * and the SDK add, free of the machine's contention. apiCpuUs / bareCpuUs is the ceiling of the
   * ratio above when the CPU is the bottleneck.
   */
  apiCpuUs: number;
  bareCpuUs: number;
  goal: string;
  meetsGoal: boolean;
}

const CONCURRENCY = 8;
const SECONDS = 1.5;
const ROUNDS = 8;
const CPU_SAMPLE = 300;
const MAX_REQUESTS = 200_000;

async function loop(run: () => Promise<void>): Promise<number> {
  const deadline = performance.now() + SECONDS * 1000;
  let done = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline && done < MAX_REQUESTS) {
        await run();
        done++;
      }
    }),
  );
  return done / ((performance.now() - started) / 1000);
}

async function listen(fetchHandler: (request: Request) => Response | Promise<Response>) {
  const server = serve({ fetch: fetchHandler, port: 0, hostname: "127.0.0.1" });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const get =
  (url: string, headers: Record<string, string> = {}) =>
  async () => {
    const res = await fetch(url, { headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`);
  };

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function measureThroughput(endpoint: string): Promise<ThroughputFigure> {
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
  const { db } = world.deps;
  const key = entityKey(world.userId, "INVOICE", invoice.body.id);

  // The bare baseline: one GetItem of the same item, answered as JSON, on the same stack.
  const bare = new Hono().get("/invoices/:id", async (c) => {
    const out = await db.doc.send(new GetCommand({ TableName: db.table, Key: key }));
    return c.json(out.Item ?? null);
  });
  const api = await listen(world.app.fetch);
  const baseline = await listen(bare.fetch);
  try {
    const apiRun = get(`${api.base}/invoices/${invoice.body.id}`, auth);
    const bareRun = get(`${baseline.base}/invoices/${invoice.body.id}`);
    const sdkRun = async () => void (await db.doc.send(new GetCommand({ TableName: db.table, Key: key })));
    // Warm every path before measuring.
    for (let i = 0; i < 50; i++) await Promise.all([apiRun(), bareRun(), sdkRun()]);
    const slices = { api: [] as number[], bare: [] as number[], sdk: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      slices.api.push(await loop(apiRun));
      slices.bare.push(await loop(bareRun));
      slices.sdk.push(await loop(sdkRun));
    }
    const best = { api: median(slices.api), bare: median(slices.bare), sdk: median(slices.sdk) };
    const ratio = Math.round((best.api / best.bare) * 100) / 100;
    const cpuPerRequest = async (run: () => Promise<unknown>) => {
      const start = process.cpuUsage();
      for (let i = 0; i < CPU_SAMPLE; i++) await run();
      const used = process.cpuUsage(start);
      return Math.round((used.user + used.system) / CPU_SAMPLE);
    };
    const path = `/invoices/${invoice.body.id}`;
    const apiCpuUs = await cpuPerRequest(async () => (await world.app.request(path, { headers: auth })).arrayBuffer());
    const bareCpuUs = await cpuPerRequest(async () => (await bare.request(path)).arrayBuffer());
    return {
      concurrency: CONCURRENCY,
      seconds: SECONDS,
      apiRps: Math.round(best.api),
      bareHonoRps: Math.round(best.bare),
      rawSdkRps: Math.round(best.sdk),
      ratio,
      apiCpuUs,
      bareCpuUs,
      goal: "≥ 0.8× bare Hono + GetItem",
      meetsGoal: ratio >= 0.8,
    };
  } finally {
    api.server.close();
    baseline.server.close();
  }
}
