import type { AddressInfo } from "node:net";
import { serve, type ServerType } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestEnv, request, type TestEnv, type TestUser } from "../support/env";
import { startPrism, violationsOf, type Prism } from "../support/prism";
import { throughPrism } from "./conformance";

/**
 * The served OpenAPI document read by a tool nobody here wrote: Stoplight Prism, proxying real
 * requests to the running app and validating both directions against the document.
 * First a proof that Prism validates at all (a document option once made it skip bodies silently),
 * then the whole conformance suite (every operation, its success and its documented errors) through
 * it, with zero violations (conformance.ts checks them after each test).
 */
throughPrism();

let env: TestEnv;
let alice: TestUser;
let server: ServerType;
let upstream: string;
let document: Record<string, any>; // a JSON document
const prisms: Prism[] = [];

beforeAll(async () => {
  env = await createTestEnv();
  alice = await env.user();
  server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: env.app.fetch, hostname: "127.0.0.1", port: 0 }, () => resolve(s));
  });
  upstream = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  document = (await request(env.app, "GET", "/openapi.json")).body;
});

afterAll(async () => {
  await Promise.all(prisms.map((p) => p.close()));
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
});

async function prismOver(doc: unknown): Promise<Prism> {
  const prism = await startPrism(doc, upstream);
  prisms.push(prism);
  return prism;
}

describe("Prism as a validating proxy", () => {
  it("validates response bodies with the document as served: a contradicting schema is reported", async () => {
    const client = await alice.call("POST", "/clients", { name: "Acme" });
    expect(client.status).toBe(201);
    // The served document with one lie in it: a client's name said to be an integer.
    const lying = structuredClone(document);
    lying.components.schemas.Client.properties.name = { type: "integer" };
    const prism = await prismOver(lying);
    const res = await fetch(`${prism.url}/clients/${client.body.id}`, {
      headers: { Authorization: `Bearer ${alice.key}` },
    });
    expect(res.status).toBe(200);
    const violations = violationsOf(res.headers);
    expect(
      violations.map((v) => v.location.join(".")),
      prism.output(),
    ).toContain("response.body.name");
  });
});
