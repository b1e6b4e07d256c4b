import { readFileSync } from "node:fs";
import { join } from "node:path";
import { handle } from "hono/aws-lambda";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "@invoicing/functions/app/create-app";
import { createTestEnv, type TestEnv } from "../support/env";
import { httpApiEvent, httpApiResponse } from "./lambda";

/**
 * The API Gateway events the Lambda tests use (lambda.ts) hold every field of AWS's documented
 * payload format 2.0, made as API Gateway makes them; and the app's Lambda handler takes them as
 * such: cookies, repeated headers, a base64 binary body.
 */
const LOGO = readFileSync(join(import.meta.dirname, "../fixtures/logo.png"));

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});

/** The field names of AWS's 2.0 example, less the authorizer and mutual TLS fields this API has not. */
const DOCUMENTED = {
  event: [
    "body",
    "cookies",
    "headers",
    "isBase64Encoded",
    "pathParameters",
    "queryStringParameters",
    "rawPath",
    "rawQueryString",
    "requestContext",
    "routeKey",
    "stageVariables",
    "version",
  ],
  requestContext: [
    "accountId",
    "apiId",
    "domainName",
    "domainPrefix",
    "http",
    "requestId",
    "routeKey",
    "stage",
    "time",
    "timeEpoch",
  ],
  http: ["method", "path", "protocol", "sourceIp", "userAgent"],
};

describe("API Gateway payload format 2.0 events", () => {
  it("hold every documented field, made as API Gateway makes them", () => {
    const event = httpApiEvent("POST", "/invoices/7/pdf", {
      routeKey: "ANY /invoices/{id}/pdf",
      query: "a=1&a=2&b=x",
      headers: { Cookie: "session=abc; theme=dark", "X-Many": ["one", "two"], "Content-Type": "text/plain" },
      body: "Hello from Lambda",
      stageVariables: { stage: "dev" },
    });
    expect(Object.keys(event).sort()).toEqual(DOCUMENTED.event);
    expect(Object.keys(event.requestContext).sort()).toEqual(DOCUMENTED.requestContext);
    expect(Object.keys(event.requestContext.http).sort()).toEqual(DOCUMENTED.http);
    expect(event).toMatchObject({
      version: "2.0",
      routeKey: "ANY /invoices/{id}/pdf",
      rawPath: "/invoices/7/pdf",
      rawQueryString: "a=1&a=2&b=x",
      cookies: ["session=abc", "theme=dark"],
      queryStringParameters: { a: "1,2", b: "x" },
      pathParameters: { id: "7" },
      stageVariables: { stage: "dev" },
      body: "Hello from Lambda",
      isBase64Encoded: false,
    });
    // Lower-case names, repeated values joined, no Cookie header (its cookies are `cookies`).
    expect(event.headers).toMatchObject({ "x-many": "one,two", "content-type": "text/plain", "content-length": "17" });
    expect(Object.keys(event.headers).every((name) => name === name.toLowerCase())).toBe(true);
    expect(event.headers).not.toHaveProperty("cookie");
    expect(event.requestContext).toMatchObject({ stage: "$default", routeKey: "ANY /invoices/{id}/pdf" });
    expect(event.requestContext.time).toMatch(/^\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000$/);
    // Without them, AWS leaves out cookies, query and path parameters, stage variables and the body.
    expect(Object.keys(httpApiEvent("GET", "/health")).sort()).toEqual([
      "headers",
      "isBase64Encoded",
      "rawPath",
      "rawQueryString",
      "requestContext",
      "routeKey",
      "version",
    ]);
  });

  it("carry a binary body base64-encoded, as API Gateway does", () => {
    const event = httpApiEvent("PUT", "/profile/logo", { headers: { "Content-Type": "image/png" }, body: LOGO });
    expect(event.isBase64Encoded).toBe(true);
    expect(Buffer.from(event.body!, "base64").equals(LOGO)).toBe(true);
    expect(event.headers["content-length"]).toBe(String(LOGO.byteLength));
  });

  it("are taken by the app's Lambda handler: cookies and repeated headers pass, a base64 image is stored whole", async () => {
    const user = await env.user();
    const handler = handle(createApp(env.deps));
    const auth = { authorization: `Bearer ${user.key}` };
    const invoke = async (event: ReturnType<typeof httpApiEvent>) =>
      httpApiResponse({ ok: true, value: await handler(event as never) });

    const upload = await invoke(
      httpApiEvent("PUT", "/profile/logo", { headers: { ...auth, "Content-Type": "image/png" }, body: LOGO }),
    );
    expect(upload.status).toBe(204);
    const logo = await env.app.request("http://localhost/profile/logo", { headers: auth });
    expect(Buffer.from(await logo.arrayBuffer()).equals(LOGO)).toBe(true);

    const listed = await invoke(
      httpApiEvent("GET", "/clients", {
        headers: { ...auth, Cookie: "session=abc", Accept: ["application/json", "*/*"] },
        query: "limit=1&limit=2",
      }),
    );
    expect([listed.status, listed.body]).toEqual([200, []]);
  });
});
