import "@invoicing/local/quiet-sdk";
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { loadConfig } from "@invoicing/core/config";
import { createDb } from "@invoicing/core/db/dynamodb";
import { createApp } from "@invoicing/functions/app/create-app";
import { localDeps } from "@invoicing/local/stack";
import { baselineReadApp } from "./baseline/read";

/**
 * One server of the throughput bench in a process of its own (forked by bench/throughput.ts), so
 * each server's CPU per request is its own process's CPU time, free of the load generator's and of
 * the other server's. `api`: the app `npm start` serves, built as it builds it (localDeps), without
 * its job ticker and stream reader; `baseline`: bench/baseline/read.ts. Both on @hono/node-server,
 * both with core's DynamoDB client (createDb), on TABLE_NAME at DYNAMODB_ENDPOINT.
 *
 * IPC: sends { port } once listening; answers "cpu" with { cpu: process.cpuUsage() }; with
 * BENCH_CPU_PROF=<file>, "profile" starts V8's CPU profiler (after the bench's warm-up, so the
 * profile holds the measured requests only, not the start-up) and "stop" writes the profile there;
 * exits on "stop".
 */
type Role = "api" | "baseline";

async function main(role: Role): Promise<void> {
  const endpoint = process.env.DYNAMODB_ENDPOINT;
  if (!endpoint) throw new Error("DYNAMODB_ENDPOINT is required");
  const app = role === "api" ? createApp(await localDeps(endpoint)) : baselineReadApp(createDb(loadConfig()));
  const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise<void>((resolve, reject) => {
    server.once("listening", () => resolve());
    server.once("error", reject);
  });
  const profileFile = process.env.BENCH_CPU_PROF;
  const profiler = profileFile ? new Session() : undefined;
  process.on("message", async (message) => {
    if (message === "cpu") process.send?.({ cpu: process.cpuUsage() });
    if (message === "profile" && profiler) {
      profiler.connect();
      await profiler.post("Profiler.enable");
      await profiler.post("Profiler.start");
    }
    if (message === "stop") {
      server.close();
      if (profiler && profileFile) {
        const { profile } = await profiler.post("Profiler.stop");
        writeFileSync(profileFile, JSON.stringify(profile));
      }
      process.exit(0);
    }
  });
  // The parent gone (a crashed bench) leaves no server behind.
  process.on("disconnect", () => process.exit(0));
  process.send?.({ port: (server.address() as AddressInfo).port });
}

const role = process.argv[2];
if (role !== "api" && role !== "baseline") throw new Error(`usage: throughput-server.ts api|baseline, not ${role}`);
main(role).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
