import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { entityKey } from "@invoicing/core/db/keys";
import { request } from "../test/support/env";
import { createWorld } from "./world";

/**
 * Requests per second of GET /invoices/{id} through the Node server on DynamoDB Local, against the
 * floor: a raw-SDK GetItem loop on the same DynamoDB Local at the same concurrency. Goal ≥ 0.7×.
 * Loops are bounded in time and count, on loopback only.
 */
export interface ThroughputFigure {
  concurrency: number;
  seconds: number;
  apiRps: number;
  rawSdkRps: number;
  ratio: number;
  goal: string;
  meetsGoal: boolean;
}

const CONCURRENCY = 8;
const SECONDS = 5;
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

export async function measureThroughput(endpoint: string): Promise<ThroughputFigure> {
  const world = await createWorld(endpoint);
  world.meter.detach();
  const auth = { Authorization: `Bearer ${world.key}` };
  const client = await request(world.app, "POST", "/clients", { name: "T" }, auth);
  const invoice = await request(world.app, "POST", "/invoices", { clientId: client.body.id, lineItems: [{ description: "x", unitPrice: "1.00" }] }, auth);
  const server = serve({ fetch: world.app.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/invoices/${invoice.body.id}`;
  try {
    // Warm both paths before measuring.
    for (let i = 0; i < 50; i++) await (await fetch(url, { headers: auth })).arrayBuffer();
    const apiRps = await loop(async () => {
      const res = await fetch(url, { headers: auth });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`GET answered ${res.status}`);
    });
    const key = entityKey(world.userId, "INVOICE", invoice.body.id);
    const { db } = world.deps;
    const rawSdkRps = await loop(async () => {
      await db.doc.send(new GetCommand({ TableName: db.table, Key: key }));
    });
    const ratio = Math.round((apiRps / rawSdkRps) * 100) / 100;
    return { concurrency: CONCURRENCY, seconds: SECONDS, apiRps: Math.round(apiRps), rawSdkRps: Math.round(rawSdkRps), ratio, goal: "≥ 0.7× raw SDK", meetsGoal: ratio >= 0.7 };
  } finally {
    server.close();
  }
}
