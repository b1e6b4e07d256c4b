import { handle } from "hono/aws-lambda";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "@invoicing/functions/app/create-app";
import { httpApiEvent, httpApiResponse } from "../deploy/lambda";
import { line, newClient, newInvoice, ok } from "../invoices/fixtures";
import { createTestEnvWithClient, expectProblem, request, type TestEnv, type TestUser } from "../support/env";

/** The limits of docs/reliability.md ("Limits"), each with what it defends. */
let env: TestEnv;
let alice: TestUser;
let clientId: number;

beforeAll(async () => {
  ({ env, user: alice, clientId } = await createTestEnvWithClient());
});

describe("error amplification", () => {
  it("85,000 empty line items in a 255 KB body: one 400 naming lineItems, a small answer", async () => {
    const body = JSON.stringify({ clientId, lineItems: Array.from({ length: 85_000 }, () => ({})) });
    expect(body.length).toBeGreaterThan(250_000);
    expect(body.length).toBeLessThan(256 * 1024);
    const res = await alice.call("POST", "/invoices", body);
    const problem = expectProblem(res, 400, "validation_error");
    expect(problem.errors).toEqual([{ path: "lineItems", message: "at most 100 line items" }]);
    expect(res.text.length).toBeLessThan(2_000);
  });

  it("errors[] holds the first 50 found, and the answer stays smaller than the body", async () => {
    // 100 lines (the most allowed), each with three bad fields: 300 errors found.
    const bad = Array.from({ length: 100 }, () => ({ description: "", quantity: "x", unitPrice: "y", taxRate: "z" }));
    const body = JSON.stringify({ clientId, lineItems: bad });
    const res = await alice.call("POST", "/invoices", body);
    const problem = expectProblem(res, 400, "validation_error");
    expect(problem.errors).toHaveLength(50);
    expect(problem.errors![0]!.path).toBe("lineItems.0.description");
    expect(res.text.length).toBeLessThan(body.length + 2_000);
  });

  it("a message quoting a huge value is cut, so the answer stays near the body's size", async () => {
    // valibot's "Expected number but received \"xxx…\"" quotes the whole string.
    const body = JSON.stringify({ clientId: "x".repeat(200_000) });
    const res = await alice.call("POST", "/invoices", body);
    expectProblem(res, 400, "validation_error");
    expect(res.text.length).toBeLessThan(5_000);
  });
});

describe("offset", () => {
  it("is at most 10000: above is a 400 on offset, at it an (empty) page", async () => {
    const problem = expectProblem(await alice.call("GET", "/invoices?offset=10001"), 400, "validation_error");
    expect(problem.errors!.map((e) => e.path)).toEqual(["offset"]);
    expectProblem(await alice.call("GET", "/clients?offset=999999999"), 400, "validation_error");
    expect(ok(await alice.call("GET", "/invoices?offset=10000")).body).toEqual([]);
  });
});

describe("stored links", () => {
  it("altProcessorPaymentLink with CR/LF or other control characters is a 400, never stored", async () => {
    for (const link of [
      "https://pay.example/x\r\nSet-Cookie: a=b",
      "https://pay.example/\nx",
      "https://pay.example/\tx",
      "https://pay.example/\u0000",
    ]) {
      const res = await alice.call("POST", "/invoices", {
        clientId,
        lineItems: [line()],
        altProcessorPaymentLink: link,
      });
      const problem = expectProblem(res, 400, "validation_error");
      expect(problem.errors!.map((e) => e.path)).toEqual(["altProcessorPaymentLink"]);
    }
    const draft = await newInvoice(alice, { clientId });
    const patched = await alice.call("PATCH", `/invoices/${draft.id}`, {
      altProcessorPaymentLink: "https://pay.example/a\r\nLocation: https://evil.example",
    });
    expectProblem(patched, 400, "validation_error");
  });

  it("is stored as its normalized href, and the pay button redirects to exactly that", async () => {
    const invoice = await newInvoice(alice, {
      clientId,
      altProcessorPaymentLink: "HTTPS://Pay.Example:443/a b/../c?x=ü",
    });
    expect(invoice.altProcessorPaymentLink).toBe("https://pay.example/c?x=%C3%BC");
    ok(await alice.call("POST", `/invoices/${invoice.id}/finalize`));
    const sent = ok(await alice.call("POST", `/invoices/${invoice.id}/send`, { to: "ap@example.test" })).body;
    const pay = await request(env.app, "GET", `/public/invoices/${sent.publicToken}/pay`);
    expect(pay.status).toBe(303);
    expect(pay.headers.get("location")).toBe("https://pay.example/c?x=%C3%BC");
  });
});

describe("response headers", () => {
  it("authenticated JSON, problems, public pages and PDFs are no-store; JSON and problems nosniff", async () => {
    const invoice = await newInvoice(alice, { clientId });
    ok(await alice.call("POST", `/invoices/${invoice.id}/finalize`));
    const sent = ok(await alice.call("POST", `/invoices/${invoice.id}/send`, { to: "ap@example.test" })).body;
    const responses = {
      json: await alice.call("GET", `/invoices/${invoice.id}`),
      list: await alice.call("GET", "/invoices"),
      problem: await alice.call("GET", "/invoices/999999"),
      unauthorized: await request(env.app, "GET", "/invoices"),
      pdf: await alice.call("GET", `/invoices/${invoice.id}/pdf`),
      page: await request(env.app, "GET", `/public/invoices/${sent.publicToken}`),
      publicPdf: await request(env.app, "GET", `/public/invoices/${sent.publicToken}/pdf`),
    };
    for (const [name, res] of Object.entries(responses)) {
      expect({ name, cache: res.headers.get("cache-control") }).toEqual({ name, cache: "no-store" });
      expect({ name, nosniff: res.headers.get("x-content-type-options") }).toEqual({ name, nosniff: "nosniff" });
    }
    expect(responses.pdf.headers.get("content-type")).toBe("application/pdf");
    expect(responses.problem.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  });

  it("the public OpenAPI document keeps its own caching", async () => {
    const res = await request(env.app, "GET", "/openapi.json");
    expect(res.headers.get("cache-control")).toBe("public, max-age=300");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });
});

describe("Link at the address the caller used", () => {
  async function twoClients(user: TestUser) {
    await newClient(user, { name: "One" });
    await newClient(user, { name: "Two" });
  }

  it("through API Gateway: built from requestContext.domainName over https, whatever X-Forwarded-Host says", async () => {
    const bob = await env.user();
    await twoClients(bob);
    const handler = handle(createApp(env.deps));
    const event = httpApiEvent("GET", "/clients", {
      query: "limit=1&name=x",
      headers: { authorization: `Bearer ${bob.key}`, "x-forwarded-host": "evil.example" },
    });
    event.requestContext.domainName = "api.invoices.example";
    event.headers.host = "api.invoices.example";
    const res = httpApiResponse({ ok: true, value: await handler(event as never) });
    expect(res.status).toBe(200);
    const link = /^<([^>]+)>; rel="next"$/.exec(res.headers.link ?? "");
    const next = new URL(link![1]!);
    expect(next.origin).toBe("https://api.invoices.example");
    expect(next.pathname).toBe("/clients");
    expect(next.searchParams.get("offset")).toBe("1");
    expect(next.searchParams.get("name")).toBe("x");
  });

  it("behind a trusted proxy (TRUST_PROXY=1): X-Forwarded-Host and -Proto; untrusted: ignored", async () => {
    const carol = await env.user();
    await twoClients(carol);
    const forwarded = { "X-Forwarded-Host": "billing.example.com", "X-Forwarded-Proto": "https" };
    const trusted = createApp({ ...env.deps, trustProxy: true });
    const behind = await request(trusted, "GET", "/clients?limit=1", undefined, {
      Authorization: `Bearer ${carol.key}`,
      ...forwarded,
    });
    expect(behind.headers.get("link")).toMatch(
      /^<https:\/\/billing\.example\.com\/clients\?limit=1&offset=1&cursor=[^>]+>; rel="next"$/,
    );

    const direct = await carol.call("GET", "/clients?limit=1", undefined, forwarded);
    expect(direct.headers.get("link")).toMatch(
      /^<http:\/\/localhost\/clients\?limit=1&offset=1&cursor=[^>]+>; rel="next"$/,
    );

    const garbage = await request(trusted, "GET", "/clients?limit=1", undefined, {
      Authorization: `Bearer ${carol.key}`,
      "X-Forwarded-Host": "a b/c",
      "X-Forwarded-Proto": "javascript",
    });
    expect(garbage.headers.get("link")).toMatch(/^<http:\/\/localhost\/clients\?/);
  });
});

describe("a body sent without Content-Length (chunked)", () => {
  /** A JSON body streamed in 16 KiB chunks, with no length declared: only counting can stop it. */
  const streamed = (text: string) => {
    const bytes = new TextEncoder().encode(text);
    return new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 16 * 1024) controller.enqueue(bytes.slice(i, i + 16 * 1024));
        controller.close();
      },
    });
  };
  const post = (text: string) =>
    env.app.request("/clients", {
      method: "POST",
      headers: { Authorization: `Bearer ${alice.key}`, "Content-Type": "application/json" },
      body: streamed(text),
      duplex: "half",
    } as RequestInit);

  it("over 256 KiB is a 413 once the count passes the limit", async () => {
    const res = await post(JSON.stringify({ name: "x".repeat(300 * 1024) }));
    expect(res.status).toBe(413);
    expect(((await res.json()) as { code: string }).code).toBe("payload_too_large");
  });

  it("within the limit is read whole", async () => {
    const res = await post(JSON.stringify({ name: "Streamed Ltd" }));
    expect(res.status).toBe(201);
    expect(((await res.json()) as { name: string }).name).toBe("Streamed Ltd");
  });
});
