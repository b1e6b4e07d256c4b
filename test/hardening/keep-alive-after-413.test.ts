import http from "node:http";
import type { AddressInfo } from "node:net";
import { serve, type ServerType } from "@hono/node-server";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestEnv, type TestEnv, type TestUser } from "../support/env";

/**
 * A body over 256 KiB is answered 413 without being read. Over HTTP (npm start's server) the answer
 * closes the connection: before, it said keep-alive, and the client's next request on the same
 * connection met a hung-up socket (Prism's proxy turned that into a 500 for an unrelated request).
 */
let env: TestEnv;
let alice: TestUser;
let server: ServerType;
let port: number;

beforeAll(async () => {
  env = await createTestEnv({});
  alice = await env.user();
  server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: env.app.fetch, hostname: "127.0.0.1", port: 0 }, () => resolve(s));
  });
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

it("a 413 closes its connection, so the next request on a keep-alive agent is answered", async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const post = (body: string, type: string) =>
    new Promise<{ status?: number; connection?: string; error?: string }>((resolve) => {
      const req = http.request(
        {
          host: "127.0.0.1",
          port,
          path: "/api-keys",
          method: "POST",
          agent,
          headers: {
            "Content-Type": type,
            Authorization: `Bearer ${alice.key}`,
            "Content-Length": Buffer.byteLength(body),
          },
        },
        (res) => {
          res.resume();
          res.on("end", () => resolve({ status: res.statusCode, connection: res.headers.connection }));
        },
      );
      req.on("error", (error) => resolve({ error: error.message }));
      req.end(body);
    });
  expect(await post(JSON.stringify({ notes: "x".repeat(300 * 1024) }), "application/json")).toEqual({
    status: 413,
    connection: "close",
  });
  expect(await post("name=x", "text/plain")).toEqual({ status: 415, connection: "keep-alive" });
  agent.destroy();
});
