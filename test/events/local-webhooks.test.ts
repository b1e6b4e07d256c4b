import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ROOT,
  scriptCommand,
  startLocalServer,
  stopLocalServer,
  userEnv,
  type LocalServer,
} from "../support/local-server";
import { startReceiver, type Receiver } from "./receiver";

/**
 * `npm run jobs` is the same service as `npm start` (API.md section 10: it "runs the same code as the
 * deployed cron functions", here against the local stack): whatever `npm start` assumes locally —
 * webhooks to http://localhost allowed — the command line assumes too. As a user meets it: a
 * webhook that failed once under `npm start` is retried by `npm run jobs -- webhooks --now <later>`
 * in another process, on the same DATA_DIR, with nothing set in the shell.
 */
const run = promisify(execFile);

let dataDir: string;
let server: LocalServer;
let receiver: Receiver;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "invoicing-local-webhooks-"));
  receiver = await startReceiver();
  server = await startLocalServer(dataDir);
});

afterAll(async () => {
  await stopLocalServer(server);
  await receiver.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Polls until `check` returns a value (not undefined), for at most a minute. */
async function eventually<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  for (const until = Date.now() + 60_000; Date.now() < until; ) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}:\n${server.output()}`);
}

interface Delivery {
  eventId: string;
  attempt: number;
  status: string;
  responseStatus: number | null;
  nextAttemptAt: string | null;
}

/** A request to the running `npm start`, with its development key: the status and the JSON body. */
async function callServer(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${await server.key}`,
      ...(body ? { "Content-Type": "application/json" } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe("npm run jobs -- webhooks, beside npm start", () => {
  it("retries the local webhook that failed under npm start", async () => {
    const call = callServer;
    const created = await call("POST", "/webhook-endpoints", { url: receiver.url, events: ["client.created"] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const endpointId = created.body.id as number;

    receiver.script.push(500); // the first attempt fails
    expect((await call("POST", "/clients", { name: "Retried" })).status).toBe(201);
    const deliveries = async () =>
      (await call("GET", `/webhook-endpoints/${endpointId}/deliveries`)).body as Delivery[];
    const failed = await eventually("the first attempt", async () =>
      (await deliveries()).find((d) => d.attempt === 1 && d.status !== "pending"),
    );
    expect(failed).toMatchObject({ status: "failed", responseStatus: 500 });
    expect(failed.nextAttemptAt).not.toBeNull();
    expect(receiver.received).toHaveLength(1);

    const later = new Date(Date.parse(failed.nextAttemptAt!) + 60_000).toISOString();
    const [command, args] = scriptCommand("jobs");
    const { stdout } = await run(command, [...args, "webhooks", "--now", later], {
      cwd: ROOT,
      env: userEnv({ DATA_DIR: dataDir }),
      timeout: 120_000,
    });
    expect(JSON.parse(stdout.trim().split("\n").at(-1)!)).toMatchObject({ job: "webhooks", now: later });

    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.answered).toBe("ok");
    expect(receiver.received[1]!.headers["webhook-id"]).toBe(receiver.received[0]!.headers["webhook-id"]);
    expect((await deliveries()).map((d) => [d.attempt, d.status])).toEqual([
      [2, "succeeded"],
      [1, "failed"],
    ]);
  }, 240_000);

  it("sends reminders whose links point at npm start's port, not the default 3000", async () => {
    const call = async (method: string, path: string, body?: unknown) => (await callServer(method, path, body)).body;
    const clientId = (await call("POST", "/clients", { name: "Reminded", email: "ap@reminded.test" })).id;
    const due = new Date(Date.now() + 10 * 86_400_000).toISOString();
    const draft = await call("POST", "/invoices", {
      clientId,
      dueDate: due,
      lineItems: [{ description: "x", unitPrice: "10" }],
    });
    await call("POST", `/invoices/${draft.id}/finalize`);
    const invoice = await call("POST", `/invoices/${draft.id}/send`);
    expect(invoice.status).toBe("sent");

    const beforeDue = new Date(Date.parse(due) - 3 * 86_400_000 + 60_000).toISOString();
    const [command, args] = scriptCommand("jobs");
    const { stdout } = await run(command, [...args, "reminders", "--now", beforeDue], {
      cwd: ROOT,
      env: userEnv({ DATA_DIR: dataDir }),
      timeout: 120_000,
    });
    expect(JSON.parse(stdout.trim().split("\n").at(-1)!)).toMatchObject({ job: "reminders", sent: 1 });
    // The send's email (npm start's stream) and the reminder (the jobs command): both link to the server.
    const outbox = join(dataDir, "outbox");
    const emails = await eventually("both emails", async () => {
      const files = existsSync(outbox) ? readdirSync(outbox).filter((f) => f.endsWith(".eml")) : [];
      return files.length >= 2 ? files.map((f) => readFileSync(join(outbox, f), "utf8")) : undefined;
    });
    expect(emails).toHaveLength(2);
    const port = new URL(server.url).port;
    for (const email of emails)
      expect(email).toContain(`http://localhost:${port}/public/invoices/${invoice.publicToken}`);
  }, 240_000);
});
