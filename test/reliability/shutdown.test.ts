import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freePort, isReachable } from "@invoicing/local/dynamo";
import { RUNS } from "./harness";

/**
 * Graceful local shutdown ("Stops cleanly on SIGINT/SIGTERM"): the command of
 * package.json's `start` script (run as npm would, minus npm and its shell: a signal sent to npm
 * does not reach its script's process), its own DynamoDB Local persisted under a temporary
 * DATA_DIR, a stream of POST /clients, SIGTERM in the middle of it. Every 201 it gave must be
 * there after a restart on the same DATA_DIR, and the stop must be clean: exit 0, DynamoDB Local
 * stopped with it.
 */
const ROOT = resolve(import.meta.dirname, "../..");

/** `npm start`'s command line, as the program to spawn and its arguments. */
function startCommand(): [string, string[]] {
  const script = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: { start: string } })
    .scripts.start;
  const [command, ...args] = script.trim().split(/\s+/);
  return [command === "node" ? process.execPath : join(ROOT, "node_modules/.bin", command!), args];
}

interface Server {
  child: ChildProcess;
  url: string;
  /** The development API key, the last line of the startup output. */
  key: Promise<string>;
  exited: Promise<number | null>;
  output: () => string;
}

const running: Server[] = [];
const dirs: string[] = [];

afterEach(async () => {
  // A failed test must not leave a server (and its DynamoDB Local) behind: SIGTERM is the clean stop.
  for (const server of running.splice(0)) {
    if (server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill("SIGTERM");
      const timer = setTimeout(() => server.child.kill("SIGKILL"), 20_000);
      await server.exited;
      clearTimeout(timer);
    }
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function start(dataDir: string): Promise<Server> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: "127.0.0.1",
    CRON_INTERVAL_SECONDS: "0",
  };
  delete env.DYNAMODB_ENDPOINT; // its own DynamoDB Local, persisted in DATA_DIR
  const [command, args] = startCommand();
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
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
  const server: Server = { child, url: `http://127.0.0.1:${port}`, key, exited, output: () => output };
  running.push(server);
  return server;
}

async function stop(server: Server): Promise<number | null> {
  server.child.kill("SIGTERM");
  return server.exited;
}

describe("npm start under SIGTERM", () => {
  it("loses no acknowledged write: every 201 before, during and after the signal is there after a restart", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "invoicing-shutdown-"));
    dirs.push(dataDir);
    const first = await start(dataDir);
    const key = await first.key;
    expect(key).toMatch(/^inv_/);

    const acknowledged = new Map<number, string>();
    const signalAfter = Math.max(20, RUNS * 2);
    let signalled = false;
    let sent = 0;
    let refused = 0;
    const worker = async (w: number) => {
      for (let n = 0; ; n++) {
        const name = `client ${w}-${n}`;
        sent++;
        try {
          const res = await fetch(`${first.url}/clients`, {
            method: "POST",
            headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
            body: JSON.stringify({ name }),
          });
          const body = (await res.json()) as { id: number; name: string };
          if (res.status === 201) acknowledged.set(body.id, body.name);
          else expect(res.status, JSON.stringify(body)).toBeLessThan(500); // shutting down is no excuse for a 5xx
        } catch {
          // Connection refused or closed: no answer, no acknowledgement. Before the signal that is a bug.
          expect(signalled, first.output()).toBe(true);
          refused++;
          return;
        }
        if (!signalled && acknowledged.size >= signalAfter) {
          signalled = true;
          first.child.kill("SIGTERM");
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)));
    expect(await first.exited, first.output()).toBe(0);
    expect(first.output()).toMatch(/SIGTERM: stopping/);
    const dynamo = /DynamoDB: (http:\/\/\S+)/.exec(first.output())?.[1];
    expect(dynamo).toBeDefined();
    expect(await isReachable(dynamo!), "DynamoDB Local outlived the server").toBe(false);
    expect(acknowledged.size).toBeGreaterThanOrEqual(signalAfter);
    expect(refused).toBeGreaterThan(0);
    expect(sent).toBeGreaterThan(acknowledged.size);

    // Restart on the same data: the same dev key, and every acknowledged client.
    const second = await start(dataDir);
    expect(await second.key).toBe(key);
    const stored = new Map<number, string>();
    for (let offset = 0; ; offset += 200) {
      const res = await fetch(`${second.url}/clients?limit=200&offset=${offset}`, {
        headers: { Authorization: `Bearer ${key}` },
      });
      expect(res.status).toBe(200);
      const page = (await res.json()) as { id: number; name: string }[];
      for (const client of page) stored.set(client.id, client.name);
      if (page.length < 200) break;
    }
    for (const [id, name] of acknowledged) expect(stored.get(id), `client ${id} (${name}) was acknowledged`).toBe(name);
    expect(await stop(second)).toBe(0);
  }, 240_000);
});
