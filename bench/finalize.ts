import "@invoicing/local/quiet-sdk";
import { startDynamoLocal } from "@invoicing/local/dynamo";
import { request } from "../test/support/env";
import { createWorld } from "./world";

/**
 * Many writers on one user: N concurrent finalizes of one user's drafts all take the next number
 * from ONE counter item (gapless numbering), so of each round of racing transactions one wins and
 * the others read again and go again (the one optimistic loop). Counted: DynamoDB requests per
 * finalize (auth included); timed: each finalize's own wall time (p50, p99, over `runs` bursts)
 * and the whole burst's (median). Every number must come out gapless. Issue 41 measured this
 * against taking turns on the counter (db/turns.ts, since removed), interleaved in one run: README.
 */
interface FinalizeFigure {
  n: number;
  runs: number;
  requestsPerFinalize: number;
  p50Ms: number;
  p99Ms: number;
  burstMs: number;
  failed: number;
  gapless: boolean;
}

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function burst(endpoint: string, n: number) {
  const world = await createWorld(endpoint);
  const auth = { Authorization: `Bearer ${world.key}` };
  const call = (method: string, path: string, body?: unknown) => request(world.app, method, path, body, auth);
  const client = (await call("POST", "/clients", { name: "Bench client", email: "bench@example.com" })).body;
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    const line = { description: "Consulting", quantity: "1", unitPrice: "10.00" };
    ids.push((await call("POST", "/invoices", { clientId: client.id, lineItems: [line] })).body.id);
  }
  world.meter.reset();
  const start = performance.now();
  const timed = await Promise.all(
    ids.map(async (id) => {
      const t = performance.now();
      const answer = await call("POST", `/invoices/${id}/finalize`);
      return { answer, ms: performance.now() - t };
    }),
  );
  const burstMs = performance.now() - start;
  // A finalize that failed (a 503 when DynamoDB Local, on a loaded machine, times out) is counted,
  // not hidden: the numbers the others took must still be gapless.
  const done = timed.filter((t) => t.answer.status === 200);
  const numbers = done.map((t) => t.answer.body.invoiceNumber as string).sort();
  const expected = Array.from({ length: done.length }, (_, i) => `INV-${String(i + 1).padStart(6, "0")}`);
  return {
    requests: world.meter.calls,
    ms: done.map((t) => t.ms),
    failed: n - done.length,
    burstMs,
    gapless: JSON.stringify(numbers) === JSON.stringify(expected),
  };
}

export async function measureConcurrentFinalizes(
  endpoint: string,
  sizes = [1, 10, 50],
  runs = 3,
): Promise<FinalizeFigure[]> {
  const figures: FinalizeFigure[] = [];
  for (const n of sizes) {
    const a = { requests: 0, ms: [] as number[], burstMs: [] as number[], failed: 0, gapless: true };
    for (let run = 0; run < runs; run++) {
      const b = await burst(endpoint, n);
      a.requests += b.requests;
      a.ms.push(...b.ms);
      a.burstMs.push(b.burstMs);
      a.gapless &&= b.gapless;
      a.failed += b.failed;
    }
    const sorted = [...a.ms].sort((x, y) => x - y);
    figures.push({
      n,
      runs,
      requestsPerFinalize: Math.round((a.requests / (n * runs)) * 10) / 10,
      p50Ms: Math.round(percentile(sorted, 50)),
      p99Ms: Math.round(percentile(sorted, 99)),
      burstMs: Math.round(
        percentile(
          [...a.burstMs].sort((x, y) => x - y),
          50,
        ),
      ),
      failed: a.failed,
      gapless: a.gapless,
    });
  }
  return figures;
}

/** `npx tsx bench/finalize.ts`: this part of the bench alone, on its own DynamoDB Local. */
if (import.meta.url === `file://${process.argv[1]}`) {
  const dynamo = await startDynamoLocal();
  try {
    console.table(await measureConcurrentFinalizes(dynamo.endpoint));
  } finally {
    await dynamo.stop();
  }
}
