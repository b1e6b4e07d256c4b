import { request } from "../test/support/env";
import type { InitRow } from "./init";
import { createWorld, type World } from "./world";

/**
 * What the API costs on AWS at on-demand prices, from what this run measured:
 * - DynamoDB read and write request units per call: the capacity DynamoDB Local reports (counted);
 * - Lambda duration per call: the handler's CPU time per request in this process (app.request, the
 *   SDK's marshalling and HTTP included; timed, on a shared machine), stretched to the function's
 *   CPU share (Lambda gives 1 vCPU at 1,769 MB), plus each sequential DynamoDB round trip at an
 *   assumed in-region latency; plus the API function's cold import (measured by init.ts) on an
 *   assumed share of requests (Lambda bills the init phase);
 * - API Gateway HTTP API requests.
 * Emails (SES, $0.10 per 1,000) and storage ($0.25 per GB-month; an invoice item is ~2 KB) are
 * left out: both are small beside these, and email moves to the stream subscriber.
 */
export const PRICES = {
  region: "us-east-1",
  dynamoReadPerMillion: 0.125, // on-demand read request units
  dynamoWritePerMillion: 0.625, // on-demand write request units
  lambdaGbSecond: 0.0000133334, // arm64
  lambdaPerMillion: 0.2,
  httpApiPerMillion: 1.0, // first 300 million a month
} as const;

export const ASSUMPTIONS = {
  dynamoRoundTripMs: 4, // one in-region DynamoDB request, p50, from Lambda
  coldStartShare: 0.01, // one request in 100 starts a container
  memoryMb: 1024, // infra/api.ts: the API function
  fullCpuMb: 1769, // Lambda's memory for one full vCPU
} as const;

interface CostFigure {
  scenario: string;
  apiRequests: number;
  roundTrips: number;
  readUnits: number;
  writeUnits: number;
  cpuMs: number;
  billedMs: number;
  dollars: { dynamo: number; lambda: number; apiGateway: number; total: number };
}

interface Sample {
  apiRequests: number;
  roundTrips: number;
  readUnits: number;
  writeUnits: number;
  cpuMs: number;
}

const line = { description: "Consulting", quantity: "3", unitPrice: "19.99", taxRate: "0.0825" };

async function ok(world: World, method: string, path: string, body?: unknown) {
  const res = await request(world.app, method, path, body, { Authorization: `Bearer ${world.key}` });
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${res.text.slice(0, 200)}`);
  return res.body;
}

/** Runs `step` `count` times, metered and timed (CPU), and returns the means per run. */
async function sample(
  world: World,
  count: number,
  requestsPerRun: number,
  step: (i: number) => Promise<void>,
): Promise<Sample> {
  world.meter.reset();
  const cpu = process.cpuUsage();
  for (let i = 0; i < count; i++) await step(i);
  const used = process.cpuUsage(cpu);
  return {
    apiRequests: requestsPerRun,
    roundTrips: world.meter.roundTrips / count,
    readUnits: world.meter.readUnits / count,
    writeUnits: world.meter.writeUnits / count,
    cpuMs: (used.user + used.system) / 1000 / count,
  };
}

function price(scenario: string, s: Sample, initMs: number): CostFigure {
  const stretch = ASSUMPTIONS.fullCpuMb / ASSUMPTIONS.memoryMb;
  // Per API request: its CPU, its share of the round trips, its share of a cold start, rounded up to 1 ms.
  const perRequestMs = (s.cpuMs * stretch + s.roundTrips * ASSUMPTIONS.dynamoRoundTripMs) / s.apiRequests;
  const billedPerRequest = Math.ceil(perRequestMs + ASSUMPTIONS.coldStartShare * initMs * stretch);
  const gbSeconds = (ASSUMPTIONS.memoryMb / 1024) * (billedPerRequest / 1000) * s.apiRequests;
  const dynamo = (s.readUnits * PRICES.dynamoReadPerMillion + s.writeUnits * PRICES.dynamoWritePerMillion) / 1e6;
  const lambda = gbSeconds * PRICES.lambdaGbSecond + (s.apiRequests * PRICES.lambdaPerMillion) / 1e6;
  const apiGateway = (s.apiRequests * PRICES.httpApiPerMillion) / 1e6;
  return {
    scenario,
    apiRequests: s.apiRequests,
    roundTrips: round(s.roundTrips, 2),
    readUnits: round(s.readUnits, 2),
    writeUnits: round(s.writeUnits, 2),
    cpuMs: round(s.cpuMs, 2),
    billedMs: billedPerRequest * s.apiRequests,
    dollars: { dynamo, lambda, apiGateway, total: dynamo + lambda + apiGateway },
  };
}

/** Scales one figure's dollars to `times` repetitions. */
const scaled = (f: CostFigure, times: number, scenario: string): CostFigure => ({
  ...f,
  scenario,
  dollars: Object.fromEntries(
    Object.entries(f.dollars).map(([k, v]) => [k, round(v * times, 4)]),
  ) as CostFigure["dollars"],
});

export async function measureCost(endpoint: string, init: InitRow[]): Promise<CostFigure[]> {
  const initMs = init.find((r) => r.handler === "packages/functions/src/lambda/api.handler")?.coldImportMs ?? 0;
  const world = await createWorld(endpoint);
  const client = await ok(world, "POST", "/clients", { name: "Cost", email: "cost@example.com" });
  const N = 60;
  // Warm the process (JIT, connections) so the CPU sampled is a warm container's.
  const warm = await ok(world, "POST", "/invoices", { clientId: client.id, lineItems: [line] });
  for (let i = 0; i < 50; i++) await ok(world, "GET", `/invoices/${warm.id}`);

  const get = await sample(world, N * 3, 1, async () => void (await ok(world, "GET", `/invoices/${warm.id}`)));
  const sent: number[] = [];
  for (let i = 0; i < N; i++) {
    const inv = await ok(world, "POST", "/invoices", { clientId: client.id, lineItems: [line] });
    await ok(world, "POST", `/invoices/${inv.id}/finalize`);
    await ok(world, "POST", `/invoices/${inv.id}/send`);
    sent.push(inv.id);
  }
  const markPaid = await sample(
    world,
    N,
    1,
    async (i) => void (await ok(world, "POST", `/invoices/${sent[i]}/mark-paid`, { paymentMethod: "cash" })),
  );
  // An invoice's life: created, finalized, sent, looked at twice, paid — 6 API requests.
  const lifecycle = await sample(world, N, 6, async () => {
    const inv = await ok(world, "POST", "/invoices", { clientId: client.id, lineItems: [line] });
    await ok(world, "POST", `/invoices/${inv.id}/finalize`);
    await ok(world, "POST", `/invoices/${inv.id}/send`);
    await ok(world, "GET", `/invoices/${inv.id}`);
    await ok(world, "GET", `/invoices/${inv.id}`);
    await ok(world, "POST", `/invoices/${inv.id}/mark-paid`, { paymentMethod: "bank_transfer" });
  });
  // The same GET with the request limits on, as deployed (a limit no request here reaches): what the
  // limiter adds — its bucket's conditional UpdateItem, alongside the BatchGetItem (docs/limits.md).
  const limited = await createWorld(endpoint, undefined, {
    rateLimits: { requestsPerSecond: 1_000_000, publicPerSecond: 1_000_000 },
  });
  const limitedWarm = await ok(limited, "POST", "/invoices", {
    clientId: (await ok(limited, "POST", "/clients", { name: "Cost" })).id,
    lineItems: [line],
  });
  for (let i = 0; i < 50; i++) await ok(limited, "GET", `/invoices/${limitedWarm.id}`);
  const limitedGet = await sample(
    limited,
    N * 3,
    1,
    async () => void (await ok(limited, "GET", `/invoices/${limitedWarm.id}`)),
  );
  return [
    scaled(price("GET /invoices/{id}", get, initMs), 1e6, "1 million GET /invoices/{id}"),
    scaled(
      price("GET /invoices/{id}, limits on", limitedGet, initMs),
      1e6,
      "1 million GET /invoices/{id} with the request limits on (API_RATE_LIMIT)",
    ),
    scaled(price("mark-paid", markPaid, initMs), 1e6, "1 million POST /invoices/{id}/mark-paid"),
    scaled(
      price("lifecycle", lifecycle, initMs),
      10_000,
      "10,000 invoices a month: create, finalize, send, 2 GET, mark-paid",
    ),
  ];
}

const round = (n: number, places = 4) => Math.round(n * 10 ** places) / 10 ** places;
