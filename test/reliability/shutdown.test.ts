import { mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isReachable } from "@invoicing/local/dynamo";
import { startLocalServer, stopLocalServer, type LocalServer } from "../support/local-server";
import { RUNS } from "./harness";

/**
 * Graceful local shutdown ("Stops cleanly on SIGINT/SIGTERM"): the command of
 * package.json's `start` script (run as npm would, minus npm and its shell: a signal sent to npm
 * does not reach its script's process), its own DynamoDB Local persisted under a temporary
 * DATA_DIR, a stream of POST /clients, SIGTERM in the middle of it. Every 201 it gave must be
 * there after a restart on the same DATA_DIR, and the stop must be clean: exit 0, DynamoDB Local
 * stopped with it.
 */
const running: LocalServer[] = [];
const dirs: string[] = [];

afterEach(async () => {
  // A failed test must not leave a server (and its DynamoDB Local) behind: SIGTERM is the clean stop.
  for (const server of running.splice(0)) await stopLocalServer(server);
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function start(dataDir: string): Promise<LocalServer> {
  const server = await startLocalServer(dataDir);
  running.push(server);
  return server;
}

/**
 * POST /clients on a connection of its own (no keep-alive: a kept connection that the stopping
 * server closes between two requests would fail a request it never read). Resolves with the answer;
 * rejects with the socket's error when no answer began, and with code RESPONSE_CUT when one began
 * and did not finish.
 */
function postClient(url: string, key: string, name: string): Promise<{ status: number; text: string }> {
  return new Promise((resolveAnswer, reject) => {
    const body = JSON.stringify({ name });
    const req = httpRequest(
      `${url}/clients`,
      {
        method: "POST",
        agent: false,
        headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", Connection: "close" },
      },
      (res) => {
        answering = true;
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolveAnswer({ status: res.statusCode!, text }));
        res.on("aborted", () => reject(cut()));
        res.on("error", () => reject(cut()));
      },
    );
    let answering = false;
    const cut = () => Object.assign(new Error("the answer was cut off"), { code: "RESPONSE_CUT" });
    req.on("error", (error) => reject(answering ? cut() : error));
    req.end(body);
  });
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
        let answer: { status: number; text: string };
        try {
          answer = await postClient(first.url, key, name);
        } catch (error) {
          // No answer at all, and only after the signal: the connection refused (the listener is
          // closed) or reset before any answer began (a connection still in the listen backlog when
          // the listener closed is reset by the kernel: run on two busy cores, that happened in 3 of
          // 4 runs). An answer that began and was cut off fails, as do a 5xx and a non-JSON body below.
          expect(signalled, first.output()).toBe(true);
          expect(["ECONNREFUSED", "ECONNRESET"], `${String(error)}\n${first.output()}`).toContain(
            (error as NodeJS.ErrnoException).code,
          );
          refused++;
          return;
        }
        // Shutting down is no excuse for a 5xx or a body that is not the JSON promised.
        expect(answer.status, answer.text).toBeLessThan(500);
        const body = JSON.parse(answer.text) as { id: number; name: string };
        if (answer.status === 201) acknowledged.set(body.id, body.name);
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
    expect(await stopLocalServer(second)).toBe(0);
  }, 240_000);
});
