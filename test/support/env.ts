import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dynamoEndpoint } from "./dynamo-endpoint";
import type { Deps } from "@invoicing/core/deps";
import { FileTransport } from "@invoicing/core/email/file-transport";
import { LOCAL_FROM } from "@invoicing/core/email/sender";
import { createApiKey } from "@invoicing/core/keys/api-keys";
import { attachmentsFor } from "@invoicing/core/public/attachments";
import { createApp } from "@invoicing/functions/app/create-app";
import { renderDocumentPdf } from "@invoicing/functions/pdf/document-pdf";
import { createStreamReader, type StreamReader } from "@invoicing/local/stream-reader";
import { createFreshTable } from "./table";

/**
 * A test's world: a fresh table in the shared DynamoDB Local, the real app over it, a settable clock
 * and helpers to make users and call the API like a client would (app.request: a real Request).
 */
export interface TestEnv {
  endpoint: string;
  tableName: string;
  deps: Deps;
  app: ReturnType<typeof createApp>;
  /** Where users' `call`s go: the app itself, unless a test puts something in front of it (a proxy). */
  via: AppLike;
  clock: { now: Date; set(iso: string): void; advance(ms: number): void };
  /** Where this env's emails land: a real file outbox (.eml files) in a fresh temp directory. */
  outboxDir: string;
  /**
   * Reads the table's change stream once, up to now, into the stream subscriber (as `npm start`
   * does continuously): events, webhook first attempts, email delivery. Returns the records handled.
   */
  drainStream(): Promise<number>;
  /** A new reader of the same stream, from its start: feeds records already handled again. */
  newStreamReader(): StreamReader;
  /** A new user with an API key; `call` sends requests as that user. */
  user(userId?: string): Promise<TestUser>;
}

export interface TestUser {
  userId: string;
  key: string;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<TestResponse>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any; // JSON of any shape
  text: string;
}

export async function createTestEnv(options: { extraDeps?: Partial<Deps>; now?: string } = {}): Promise<TestEnv> {
  const endpoint = dynamoEndpoint();
  const { tableName, db } = await createFreshTable(endpoint, "test");
  const clock = {
    now: new Date(options.now ?? "2026-11-22T09:30:00.000Z"),
    set(iso: string) {
      this.now = new Date(iso);
    },
    advance(ms: number) {
      this.now = new Date(this.now.getTime() + ms);
    },
  };
  const outboxDir = mkdtempSync(join(tmpdir(), "invoicing-outbox-"));
  const deps: Deps = {
    db,
    clock: () => clock.now,
    publicBaseUrl: "http://localhost:3000",
    outbox: new FileTransport(outboxDir, { from: LOCAL_FROM }),
    // As the local server: PDFs drawn in process (email attachments).
    renderPdf: (view, now) => renderDocumentPdf(view, { now }),
    emailAttachments: attachmentsFor,
    ...options.extraDeps,
  };
  const app = createApp(deps);
  const newStreamReader = () => createStreamReader(deps, { endpoint, tableName });
  let reader: StreamReader | undefined;
  const env: TestEnv = {
    endpoint,
    tableName,
    deps,
    app,
    via: app,
    clock,
    outboxDir,
    drainStream: () => (reader ??= newStreamReader()).drain(),
    newStreamReader,
    async user(userId = `u-${randomUUID().slice(0, 8)}`) {
      const { key } = await createApiKey(deps.db, userId, "test", clock.now);
      return {
        userId,
        key,
        call: (method, path, body, headers = {}) =>
          request(env.via, method, path, body, { Authorization: `Bearer ${key}`, ...headers }),
      };
    },
  };
  return env;
}

/**
 * Where many API test files start: a fresh env, a user in it, and one client of that user's
 * (Acme, billing@acme.test, unless `client` says otherwise).
 */
export async function createTestEnvWithClient(
  client: Record<string, unknown> = {},
  options: Parameters<typeof createTestEnv>[0] = {},
): Promise<{ env: TestEnv; user: TestUser; clientId: number }> {
  const env = await createTestEnv(options);
  const user = await env.user();
  const res = await user.call("POST", "/clients", { name: "Acme", email: "billing@acme.test", ...client });
  if (res.status !== 201) throw new Error(`client not created: ${res.status} ${res.text.slice(0, 500)}`);
  return { env, user, clientId: res.body.id };
}

/** What requests can be sent to: the Hono app (app.request), or an HTTP forwarder with that shape. */
export interface AppLike {
  request: (input: string, init?: RequestInit) => Response | Promise<Response>;
}

/** One HTTP request through the app, JSON in and out. A string or byte body is sent as is. */
export async function request(
  app: AppLike,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<TestResponse> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === "string" || body instanceof Uint8Array ? (body as BodyInit) : JSON.stringify(body);
    (init.headers as Record<string, string>)["Content-Type"] ??= "application/json";
  }
  const res = await app.request(`http://localhost${path}`, init);
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** Asserts a problem+json response and returns its body. */
export function expectProblem(res: TestResponse, status: number, code: string) {
  if (res.status !== status || res.body?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${res.status} ${res.text.slice(0, 500)}`);
  }
  if (!res.headers.get("content-type")?.startsWith("application/problem+json")) {
    throw new Error(`expected application/problem+json, got ${res.headers.get("content-type")}`);
  }
  return res.body as {
    type: string;
    title: string;
    status: number;
    detail: string;
    code: string;
    errors?: { path: string; message: string }[];
  };
}
