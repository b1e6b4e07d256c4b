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

/** A POST over `agent` (one socket, kept alive): its status and Connection header, or the socket's error. */
const poster =
  (agent: http.Agent, key: string, path = "/api-keys") =>
  (body: string, type: string) =>
    new Promise<{ status?: number; connection?: string; error?: string }>((resolve) => {
      const req = http.request(
        {
          host: "127.0.0.1",
          port,
          path,
          method: "POST",
          agent,
          headers: {
            "Content-Type": type,
            Authorization: `Bearer ${key}`,
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

it("a 413 closes its connection, so the next request on a keep-alive agent is answered", async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const post = poster(agent, alice.key);
  expect(await post(JSON.stringify({ notes: "x".repeat(300 * 1024) }), "application/json")).toEqual({
    status: 413,
    connection: "close",
  });
  expect(await post("name=x", "text/plain")).toEqual({ status: 415, connection: "keep-alive" });
  agent.destroy();
});

it("a read-only key's 403 for a large body is answered as the 413 is: seen whole, and the next request too", async () => {
  const readOnly = (await alice.call("POST", "/api-keys", { name: "books", scope: "read_only" })).body.key as string;
  const big = "x".repeat(300 * 1024);
  for (let round = 0; round < 3; round++) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const post = poster(agent, readOnly, "/clients");
    const refused = await post(big, "text/plain");
    expect(refused, JSON.stringify(refused)).toEqual({ status: 403, connection: "close" });
    // The next request on the same agent (the same socket, or a new one if that was closed).
    expect(await post(JSON.stringify({ name: "Acme" }), "application/json")).toMatchObject({ status: 403 });
    agent.destroy();
  }
  // Node's fetch (undici), which reported the reset as UND_ERR_SOCKET while it uploaded.
  const url = `http://127.0.0.1:${port}/clients`;
  const headers = { Authorization: `Bearer ${readOnly}`, "Content-Type": "text/plain" };
  for (let round = 0; round < 3; round++) {
    const res = await fetch(url, { method: "POST", headers, body: big });
    expect(res.status).toBe(403);
    expect((await res.json()).code).toBe("insufficient_scope");
    const next = await fetch(url, { method: "POST", headers, body: "{}" });
    expect(next.status).toBe(403);
    await next.arrayBuffer();
  }
});
