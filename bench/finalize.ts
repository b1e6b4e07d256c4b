import { request } from "../test/support/env";
import { createWorld } from "./world";

/**
 * Many writers on one user: N concurrent finalizes of one user's drafts all take the next number
 * from ONE counter item (gapless numbering), so of each round of racing transactions one wins and
 * the others read again (db/optimistic.ts). Counted: DynamoDB requests per finalize (auth
 * included); timed: wall time per finalize and of the whole burst. Goal (issue 31): requests per
 * finalize at N = 50 at most 2× those at N = 1, and every number gapless.
 */
interface FinalizeFigure {
  n: number;
  requestsPerFinalize: number;
  msPerFinalize: number;
  burstMs: number;
  gapless: boolean;
  goal?: string;
  meetsGoal?: boolean;
}

export async function measureConcurrentFinalizes(endpoint: string, sizes = [1, 10, 50]): Promise<FinalizeFigure[]> {
  const figures: FinalizeFigure[] = [];
  for (const n of sizes) {
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
    const answers = await Promise.all(ids.map((id) => call("POST", `/invoices/${id}/finalize`)));
    const burstMs = performance.now() - start;
    const failed = answers.filter((a) => a.status !== 200);
    if (failed.length) throw new Error(`${failed.length} of ${n} finalizes failed: ${failed[0]!.status}`);
    const numbers = answers.map((a) => a.body.invoiceNumber as string).sort();
    const expected = Array.from({ length: n }, (_, i) => `INV-${String(i + 1).padStart(6, "0")}`);
    figures.push({
      n,
      requestsPerFinalize: Math.round((world.meter.calls / n) * 10) / 10,
      msPerFinalize: Math.round((burstMs / n) * 10) / 10,
      burstMs: Math.round(burstMs),
      gapless: JSON.stringify(numbers) === JSON.stringify(expected),
    });
  }
  const base = figures[0]!.requestsPerFinalize;
  for (const f of figures) {
    f.goal = `≤ 2 × ${base} requests, gapless`;
    f.meetsGoal = f.requestsPerFinalize <= 2 * base && f.gapless;
  }
  return figures;
}
