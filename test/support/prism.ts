import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Stoplight Prism as a validating proxy, the way a user of the OpenAPI document would run it:
 * `prism proxy <document> <upstream>`. Every request and response that crosses it is checked
 * against the document; a violation comes back in the response's `sl-violations` header (a JSON
 * array), which `violationsOf` reads. Without `--errors` Prism still forwards the real response,
 * so a test sees both what the app answered and what Prism thought of it.
 */
export interface Prism {
  url: string;
  close(): Promise<void>;
  /** Everything Prism printed, for a failure message. */
  output(): string;
}

export interface Violation {
  location: string[];
  severity: string;
  code: string | number;
  message: string;
}

const require = createRequire(import.meta.url);

export async function startPrism(document: unknown, upstream: string): Promise<Prism> {
  const dir = mkdtempSync(join(tmpdir(), "prism-"));
  const file = join(dir, "openapi.json");
  writeFileSync(file, JSON.stringify(document));
  const port = await freePort();
  const bin = require.resolve("@stoplight/prism-cli/dist/index.js");
  const child = spawn(process.execPath, [bin, "proxy", file, upstream, "--host", "127.0.0.1", "--port", String(port)], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
  });
  let log = "";
  child.stdout!.on("data", (chunk: Buffer) => (log += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (log += chunk.toString()));
  await waitForListening(child, () => log, 60_000);
  return {
    url: `http://127.0.0.1:${port}`,
    output: () => log,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** The violations Prism reported for one response (none: an empty array). */
export function violationsOf(headers: Headers): Violation[] {
  const raw = headers.get("sl-violations");
  return raw ? (JSON.parse(raw) as Violation[]) : [];
}

async function waitForListening(child: ChildProcess, log: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (/Prism is listening/.test(log())) return;
    if (child.exitCode !== null) throw new Error(`prism exited (${child.exitCode}):\n${log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill("SIGKILL");
  throw new Error(`prism did not start within ${timeoutMs} ms:\n${log()}`);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
