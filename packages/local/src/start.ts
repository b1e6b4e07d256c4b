import "./quiet-sdk";
import { mkdirSync, writeFileSync, rmSync } from "node:fs";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { serve } from "@hono/node-server";
import { authenticate, createApiKey } from "@invoicing/core/keys/api-keys";
import { createApp } from "@invoicing/functions/app/create-app";
import { JavaMissingError } from "./dynamo";
import { dataDir, devKeyFile, endpointFile, portFile, readIfExists } from "./paths";
import { localDeps, openLocalDatabase } from "./stack";
import { appendLocalFailure, localFailureFile } from "./stream-failures";
import { createStreamReader } from "./stream-reader";
import { startTicker } from "./ticker";
import { loadConfig } from "@invoicing/core/config";

/**
 * `npm start`: the whole service on this machine. DynamoDB Local persisted under
 * DATA_DIR (or DYNAMODB_ENDPOINT), the table, the Hono app on PORT, the jobs every
 * CRON_INTERVAL_SECONDS, and a development API key. package.json runs it as `node --import tsx`, one
 * process: the tsx launcher would relay a stop signal and SIGKILL this process when it does not
 * acknowledge within 30 ms, as a server under load does not (docs/reliability.md).
 */
const DEV_USER = "dev";
/** How long a stop waits for in-flight requests (the API function's own timeout is 25 s). */
const DRAIN_MS = 25_000;

async function main(): Promise<void> {
  const port = Number(process.env.PORT ?? 3000);
  const interval = Number(process.env.CRON_INTERVAL_SECONDS ?? 60);
  mkdirSync(dataDir(), { recursive: true });

  const database = await openLocalDatabase({ allowShared: false });
  if (database.startedHere) writeFileSync(endpointFile(), database.endpoint);
  const deps = await localDeps(database.endpoint);

  // The dev key is kept in DATA_DIR because the table stores only its hash.
  let devKey = readIfExists(devKeyFile());
  if (!devKey || !(await authenticate(deps.db, devKey, new Date()))) {
    devKey = (await createApiKey(deps.db, DEV_USER, "development", new Date())).key;
    writeFileSync(devKeyFile(), devKey + "\n", { mode: 0o600 });
  }

  const app = createApp(deps);
  // The loopback unless HOST says otherwise: a development server with a known API key, reachable
  // from the network only when asked for (HOST=0.0.0.0).
  const host = process.env.HOST || "127.0.0.1";
  const server = serve({ fetch: app.fetch, port, hostname: host });
  await new Promise<void>((resolve, reject) => {
    server.once("listening", () => resolve());
    server.once("error", reject);
  });
  writeFileSync(portFile(), String(port));
  const stopTicker = startTicker(deps, interval, (line) => console.log(line));
  // The table's change stream, read continuously whatever CRON_INTERVAL_SECONDS says: events,
  // webhook first attempts and email delivery happen within a second of the change.
  // A record that keeps failing goes to the local failure list after the deployed bound of retries
  // (packages/local/src/stream-failures.ts): `npm run jobs -- replay-stream-failures` replays it.
  const reader = createStreamReader(deps, {
    endpoint: database.endpoint,
    tableName: loadConfig().tableName,
    onGiveUp: (record) => {
      appendLocalFailure(localFailureFile(), record);
      console.log(
        `stream record ${record.sequenceNumber} gave up after its retries; listed in ${localFailureFile()} ` +
          "(npm run --silent jobs -- replay-stream-failures)",
      );
    },
  });
  const stopReader = reader.start(500, (line) => console.log(line));

  console.log(`Invoicing API listening on http://${host.includes(":") ? `[${host}]` : host}:${port}`);
  console.log(`DynamoDB: ${database.endpoint}${database.startedHere ? ` (DynamoDB Local, data in ${dataDir()})` : ""}`);
  console.log(
    `Jobs: ${interval > 0 ? `every ${interval}s` : "off (CRON_INTERVAL_SECONDS=0)"}; change stream: read continuously`,
  );
  console.log(`Development API key (user "${DEV_USER}"):`);
  console.log(devKey);

  let stopping = false;
  // server.close() refuses new connections, but a keep-alive client could keep an open one busy
  // forever, and the stop never came (found by test/reliability/shutdown.test.ts). While stopping,
  // every response closes its connection, idle ones are closed at once, and after DRAIN_MS the rest.
  server.on("request", (_req: IncomingMessage, res: ServerResponse) => {
    if (stopping) res.setHeader("Connection", "close");
  });
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: stopping`);
    // Finish in-flight requests and job ticks before DynamoDB Local goes away: no acknowledged write is lost.
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      const http = server as Server;
      http.closeIdleConnections();
      setTimeout(() => http.closeAllConnections(), DRAIN_MS).unref();
    });
    await stopTicker();
    await stopReader();
    reader.close();
    if (database.startedHere) rmSync(endpointFile(), { force: true });
    rmSync(portFile(), { force: true });
    await database.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
}

main().catch((error: unknown) => {
  if (error instanceof JavaMissingError) console.error(error.message);
  else console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
