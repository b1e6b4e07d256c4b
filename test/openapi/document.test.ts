import { readFileSync } from "node:fs";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Hono } from "hono";
import { operationsOf as describedOperations } from "@invoicing/functions/openapi/operations";
import { beforeAll, describe, expect, it } from "vitest";
import { IN_CI, skipNotice } from "../support/ci";
import { findShared } from "../support/shared";
import { createTestEnv, request, type TestEnv } from "../support/env";
import { operationsOf, pathShape, type Json } from "./doc";

/**
 * The document itself: valid OpenAPI 3.1, and the same set of operations as the app routes and as
 * API.md lists — so a route added without documentation, or documentation of a route that does
 * not exist, fails here.
 */

let env: TestEnv;
let doc: Json;

beforeAll(async () => {
  env = await createTestEnv();
  const res = await request(env.app, "GET", "/openapi.json");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  doc = res.body;
});

describe("GET /openapi.json", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    expect(doc.openapi).toBe("3.1.0");
    const result = await new Validator({ allErrors: true }).validate(doc);
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)?.slice(0, 3000)).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("a broken document fails that validation (the check can fail)", async () => {
    const broken = structuredClone(doc);
    broken.paths["/clients"].get.responses = "none";
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it("is public, and needs no key", async () => {
    const res = await request(env.app, "GET", "/openapi.json", undefined, { Authorization: "Bearer nonsense" });
    expect(res.status).toBe(200);
  });

  it("documents every route the app registers, and only those", () => {
    const routed = new Set(
      env.app.routes.filter((r) => r.method !== "ALL").map((r) => `${r.method.toLowerCase()} ${pathShape(r.path)}`),
    );
    const documented = new Set(operationsOf(doc).map((o) => `${o.method} ${pathShape(o.path)}`));
    expect(
      [...routed].filter((r) => !documented.has(r)),
      "routes missing from the document",
    ).toEqual([]);
    expect(
      [...documented].filter((d) => !routed.has(d)),
      "documented operations with no route",
    ).toEqual([]);
  });

  it("has every `METHOD /path` of API.md", (ctx) => {
    // API.md lives beside the project (../shared), not in it: a checkout of the project alone has
    // none, and skips loudly; CI's machine has it, and must not skip.
    const apiMd = findShared("API.md", process.env.API_MD);
    if (!apiMd.path) {
      const reason = `no API.md at ${apiMd.tried.join(" or ")} (set API_MD)`;
      if (IN_CI) throw new Error(`${reason}: under CI the cross-check must run`);
      ctx.skip(skipNotice("the API.md cross-check (document.test.ts)", reason));
    }
    const text = readFileSync(apiMd.path!, "utf8");
    const listed = new Set(
      [...text.matchAll(/`(GET|POST|PATCH|DELETE) (\/[^`\s?]*)/g)].map(
        (m) => `${m[1]!.toLowerCase()} ${pathShape(m[2]!)}`,
      ),
    );
    expect(listed.size).toBeGreaterThan(30);
    const documented = new Set(operationsOf(doc).map((o) => `${o.method} ${pathShape(o.path)}`));
    expect([...listed].filter((l) => !documented.has(l))).toEqual([]);
  });

  it("says what API.md section 15 says: event types, statuses, rotation, redelivery, disabling, resend", (ctx) => {
    const apiMd = findShared("API.md", process.env.API_MD);
    if (!apiMd.path) {
      const reason = `no API.md at ${apiMd.tried.join(" or ")} (set API_MD)`;
      if (IN_CI) throw new Error(`${reason}: under CI the cross-check must run`);
      ctx.skip(skipNotice("the API.md section 15 cross-check (document.test.ts)", reason));
    }
    const text = readFileSync(apiMd.path!, "utf8");
    const section = text.slice(text.indexOf("## 15. "), text.indexOf("## 16. "));
    const schemas = doc.components.schemas as Json;
    const expand = (s: string) =>
      [...s.matchAll(/`([a-z_]+)\.([a-z_|]+)`/g)].flatMap((m) => m[2]!.split("|").map((a) => `${m[1]}.${a}`));
    // "Types: …" up to the sentence after it; the types section 19 (Peppol) adds are named there too.
    const typesSentence = /Types: ([\s\S]*?)\. A change made/.exec(section)![1]!;
    const listed = new Set(expand(typesSentence));
    const peppol = new Set(expand(typesSentence.split(";").find((part) => part.includes("section 19")) ?? ""));
    const documented = new Set<string>(schemas.Event.properties.type.enum);
    expect(listed.size).toBeGreaterThan(35);
    expect([...listed].filter((t) => !peppol.has(t) && !documented.has(t))).toEqual([]);
    expect([...documented].filter((t) => !listed.has(t))).toEqual([]);
    expect(documented.has("webhook_endpoint.disabled")).toBe(true);
    // The statuses of a delivery attempt and of an email, as listed.
    const words = (re: RegExp) => [...re.exec(section)![1]!.matchAll(/[a-z_]+/g)].map((m) => m[0]);
    expect(schemas.WebhookDelivery.properties.status.enum).toEqual(words(/status \(([a-z |]+)\)/));
    expect(schemas.EmailDelivery.properties.status.enum).toEqual(words(/with their `status` \(([^)]*)\)/));
    // Each operation section 15 names, with the answers it gives.
    const op = (method: string, path: string) => operationsOf(doc).find((o) => o.method === method && o.path === path)!;
    const answers = (method: string, path: string) => Object.keys(op(method, path).operation.responses);
    const json = (method: string, path: string, status: string) =>
      op(method, path).operation.responses[status].content["application/json"].schema as Json;
    expect(section).toContain("`POST /webhook-endpoints/{id}/rotate-secret` → 200");
    expect(json("post", "/webhook-endpoints/{id}/rotate-secret", "200")).toEqual({
      $ref: "#/components/schemas/CreatedWebhookEndpoint",
    });
    expect(section).toContain("answers\n  `secret: null`");
    expect(schemas.CreatedWebhookEndpoint.properties.secret.anyOf).toContainEqual({ type: "null" });
    expect(op("post", "/webhook-endpoints/{id}/rotate-secret").operation.description).toMatch(/24 hours/);
    const redeliver = "/webhook-endpoints/{id}/deliveries/{event}/redeliver";
    expect(section).toContain("`POST /webhook-endpoints/{id}/deliveries/{eventId}/redeliver` → 200");
    expect(answers("post", redeliver)).toEqual(expect.arrayContaining(["200", "422"]));
    expect(op("post", redeliver).operation.description).toMatch(/invalid_transition[\s\S]*disabled/);
    expect(section).toMatch(/disabled \(`enabled: false`,\s+event `webhook_endpoint.disabled`\)/);
    expect(schemas.WebhookEndpoint.properties.enabled.description).toMatch(/5 days[\s\S]*webhook_endpoint\.disabled/);
    expect(section).toMatch(/`POST \/email-deliveries\/\{id\}\/resend`\s+sends a `failed` one again/);
    expect(answers("post", "/email-deliveries/{email}/resend")).toEqual(expect.arrayContaining(["200", "422"]));
    expect(op("post", "/email-deliveries/{email}/resend").operation.description).toMatch(
      /`failed`[\s\S]*invalid_transition/,
    );
    expect(op("get", "/email-deliveries").operation.description).toMatch(/latest 100 emails, newest first/);
  });

  it("secures every operation with the bearer scheme except API.md's public ones", () => {
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    expect(doc.security).toEqual([{ bearer: [] }]);
    const publicOps = operationsOf(doc)
      .filter((o) => o.public)
      .map((o) => o.path);
    for (const path of publicOps)
      expect(path).toMatch(/^\/(health|openapi\.json|docs|public\/.*|webhooks\/card-processor)$/);
    expect(new Set(publicOps)).toEqual(
      new Set([
        "/health",
        "/openapi.json",
        "/docs",
        "/webhooks/card-processor",
        "/public/invoices/{publicToken}",
        "/public/invoices/{publicToken}/pdf",
        "/public/invoices/{publicToken}/pay",
        "/public/estimates/{publicToken}",
        "/public/estimates/{publicToken}/pdf",
        "/public/invoices/{publicToken}/e-invoice",
        "/public/credit-notes/{publicToken}",
        "/public/credit-notes/{publicToken}/pdf",
        "/public/credit-notes/{publicToken}/e-invoice",
      ]),
    );
  });

  it("gives every error response a problem+json body and every POST of a user its Idempotency-Key", () => {
    for (const op of operationsOf(doc)) {
      for (const [status, response] of Object.entries<Json>(op.operation.responses)) {
        if (Number(status) < 400) continue;
        expect(Object.keys(response.content), `${op.operationId} ${status}`).toEqual(["application/problem+json"]);
      }
      if (!op.public) expect(op.operation.responses["401"], op.operationId).toBeDefined();
      const takesKey = (op.operation.parameters as Json[]).some(
        (p) => p.$ref === "#/components/parameters/IdempotencyKey" || p.name === "Idempotency-Key",
      );
      expect(takesKey, op.operationId).toBe(op.method === "post" && !op.public);
    }
  });

  it("documents request decimals as string or number and timestamps as date-time or date", () => {
    const { Quantity, UnitPrice, TaxRate, TimestampInput, LineItemInput } = doc.components.schemas;
    for (const decimal of [Quantity, UnitPrice, TaxRate]) {
      expect(decimal.anyOf.map((s: Json) => s.type).sort()).toEqual(["number", "string"]);
    }
    expect(TimestampInput.type).toBe("string");
    expect(TimestampInput.anyOf.map((s: Json) => s.format).sort()).toEqual(["date", "date-time"]);
    expect(TimestampInput.anyOf.map((s: Json) => s.type)).toEqual(["string", "string"]);
    expect(LineItemInput.properties.quantity.$ref).toBe("#/components/schemas/Quantity");
    const createInvoice = doc.paths["/invoices"].post.requestBody.content["application/json"].schema;
    expect(createInvoice.additionalProperties).toBe(false);
    expect(createInvoice.required).toEqual(["clientId"]);
  });

  it("types every branch of every anyOf/oneOf and every enum, so generated clients get no `unknown`", () => {
    const untyped: string[] = [];
    const walk = (node: unknown, at: string): void => {
      if (Array.isArray(node)) {
        for (const [i, x] of node.entries()) walk(x, `${at}/${i}`);
        return;
      }
      if (node === null || typeof node !== "object") return;
      const n = node as Json;
      for (const key of ["anyOf", "oneOf"]) {
        (n[key] as Json[] | undefined)?.forEach((branch, i) => {
          if (!("type" in branch) && !("$ref" in branch) && !("const" in branch)) untyped.push(`${at}/${key}/${i}`);
        });
      }
      if (n.enum && !n.type) untyped.push(`${at}/enum`);
      for (const [key, value] of Object.entries(n)) walk(value, `${at}/${key}`);
    };
    walk(doc, "#");
    expect(untyped).toEqual([]);
  });

  it("states no jsonSchemaDialect (it restates the default, and makes Prism 5 skip body validation)", () => {
    expect(doc).not.toHaveProperty("jsonSchemaDialect");
  });

  it("cannot leave out a route: one without describe() stops the document from being built", () => {
    const undescribed = new Hono().get("/nothing-here", (c) => c.text("")).routes;
    expect(() => describedOperations(undescribed)).toThrow(/GET \/nothing-here has no describe\(\)/);
  });
});
