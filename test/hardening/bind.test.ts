import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { networkInterfaces, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { dynamoEndpoint } from "../support/dynamo-endpoint";
import { freePort, startDynamoLocal } from "../../packages/local/src/dynamo";
import { IN_CI, skipNotice } from "../support/ci";

/**
 * Local exposure: `npm start` and its DynamoDB Local (which accepts any credentials) listen on the
 * loopback only, unless HOST says otherwise for the API. Checked from this machine's own
 * non-loopback address, which reaches a socket bound to every interface.
 */
const ROOT = resolve(import.meta.dirname, "../..");
/** Java and `npm start` start slowly on a loaded machine (the suite's own DynamoDB allows 90 s). */
const STARTUP_TIMEOUT = 180_000;
const networkAddress = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === "IPv4" && !a.internal)?.address;
/**
 * Where "the network" is probed from: this machine's own non-loopback address, or, on a machine
 * without one (a CI container), Linux's 127.0.0.2 — every 127/8 address reaches the loopback
 * interface, so a socket bound to every interface answers there and one bound to 127.0.0.1 does not.
 */
const external = networkAddress ?? (process.platform === "linux" ? "127.0.0.2" : undefined);
if (!external) {
  const reason = "no non-loopback IPv4 address to probe from, and no 127.0.0.2 (not Linux)";
  if (IN_CI) throw new Error(`bind.test.ts must run in CI: ${reason}`);
  skipNotice("the loopback binding tests (test/hardening/bind.test.ts)", reason);
}

/** "open" when a TCP connection to host:port is accepted, else the error code (ECONNREFUSED …). */
function probe(host: string, port: number): Promise<string> {
  return new Promise((done) => {
    const socket = connect({ host, port });
    socket.setTimeout(5_000, () => {
      socket.destroy();
      done("timeout");
    });
    socket.once("connect", () => {
      socket.destroy();
      done("open");
    });
    socket.once("error", (error: NodeJS.ErrnoException) => done(error.code ?? "error"));
  });
}

describe.skipIf(!external)(`bound to the loopback (probed from ${external})`, () => {
  it(
    "DynamoDB Local answers on 127.0.0.1 and refuses the network",
    async () => {
      const dynamo = await startDynamoLocal();
      try {
        const port = Number(new URL(dynamo.endpoint).port);
        expect(await probe("127.0.0.1", port)).toBe("open");
        expect(await probe(external!, port)).toBe("ECONNREFUSED");
      } finally {
        await dynamo.stop();
      }
    },
    STARTUP_TIMEOUT,
  );

  it(
    "npm start listens on 127.0.0.1 by default, on every interface with HOST=0.0.0.0",
    async () => {
      for (const [host, fromNetwork] of [
        [undefined, "ECONNREFUSED"],
        ["0.0.0.0", "open"],
      ] as const) {
        const dataDir = mkdtempSync(join(tmpdir(), "invoicing-bind-"));
        const port = await freePort();
        const env: NodeJS.ProcessEnv = {
          ...process.env,
          DATA_DIR: dataDir,
          PORT: String(port),
          CRON_INTERVAL_SECONDS: "0",
          DYNAMODB_ENDPOINT: dynamoEndpoint(),
          TABLE_NAME: `bind-${randomUUID()}`,
        };
        if (host) env.HOST = host;
        else delete env.HOST;
        const script = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: { start: string } })
          .scripts.start;
        const [, ...args] = script.trim().split(/\s+/);
        const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
        const exited = new Promise((done) => child.once("exit", done));
        try {
          let output = "";
          await new Promise<void>((ready, fail) => {
            child.stdout!.on("data", (chunk: Buffer) => {
              output += chunk.toString();
              if (output.includes("Development API key")) ready();
            });
            child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
            child.once("exit", () => fail(new Error(`npm start exited: ${output}`)));
          });
          expect(output).toContain(`listening on http://${host ?? "127.0.0.1"}:${port}`);
          expect(await probe("127.0.0.1", port)).toBe("open");
          expect({ host, fromNetwork: await probe(external!, port) }).toEqual({ host, fromNetwork });
        } finally {
          child.kill("SIGTERM");
          await exited;
          rmSync(dataDir, { recursive: true, force: true });
        }
      }
    },
    STARTUP_TIMEOUT,
  );
});
