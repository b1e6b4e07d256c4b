import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { freePort } from "@invoicing/local/dynamo";

/**
 * `npm start` and the command lines as a user runs them: the commands of package.json's scripts in
 * processes of their own (minus npm and its shell: a signal sent to npm does not reach its script's
 * process), on a DATA_DIR of the test's choosing.
 */
export const ROOT = resolve(import.meta.dirname, "../..");

/** A package.json script's command line, as the program to spawn and its arguments. */
export function scriptCommand(name: "start" | "jobs" | "keys"): [string, string[]] {
  const scripts = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> })
    .scripts;
  const [command, ...args] = scripts[name]!.trim().split(/\s+/);
  return [command === "node" ? process.execPath : join(ROOT, "node_modules/.bin", command!), args];
}

/**
 * The environment of a user's shell: what the test process has, less the local defaults under test
 * (a test that needs one sets it) and less a DynamoDB endpoint (the stack's own DynamoDB Local,
 * persisted in DATA_DIR, unless `env` names one).
 */
export function userEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  delete base.DYNAMODB_ENDPOINT;
  delete base.WEBHOOKS_ALLOW_PRIVATE;
  return { ...base, ...env };
}

export interface LocalServer {
  child: ChildProcess;
  url: string;
  /** The development API key, the last line of the startup output. */
  key: Promise<string>;
  exited: Promise<number | null>;
  output: () => string;
}

/** `npm start` on `dataDir` (its own DynamoDB Local there), on a free port of the loopback, jobs off. */
export async function startLocalServer(dataDir: string, env: NodeJS.ProcessEnv = {}): Promise<LocalServer> {
  const port = await freePort();
  const [command, args] = scriptCommand("start");
  const child = spawn(command, args, {
    cwd: ROOT,
    env: userEnv({ DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1", CRON_INTERVAL_SECONDS: "0", ...env }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<number | null>((resolveExit) => child.once("exit", (code) => resolveExit(code)));
  const key = new Promise<string>((resolveKey, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const lines = output.split("\n").map((l) => l.trim());
      const at = lines.findIndex((l) => l.startsWith("Development API key"));
      if (at >= 0 && lines[at + 1]) resolveKey(lines[at + 1]!);
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    void exited.then((code) => reject(new Error(`npm start exited (${code}) before it was ready:\n${output}`)));
  });
  return { child, url: `http://127.0.0.1:${port}`, key, exited, output: () => output };
}

/** SIGTERM (the clean stop), then SIGKILL should it not stop within 20 s; resolves with the exit code. */
export async function stopLocalServer(server: LocalServer): Promise<number | null> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return server.child.exitCode;
  server.child.kill("SIGTERM");
  const timer = setTimeout(() => server.child.kill("SIGKILL"), 20_000);
  const code = await server.exited;
  clearTimeout(timer);
  return code;
}
