import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createDb, type Db } from "@invoicing/core/db/client";
import { userPk } from "@invoicing/core/db/keys";
import { JOB_NAMES, jobs, type JobName } from "@invoicing/core/jobs/all";
import { createClient } from "@invoicing/core/clients/clients";
import { createInvoice, getInvoice } from "@invoicing/core/invoices/invoices";
import { finalizeInvoice, sendInvoice } from "@invoicing/core/invoices/lifecycle";
import { createApiKey } from "@invoicing/core/keys/api-keys";
import { ensureTable } from "../../packages/local/src/bootstrap";
import { bundleFunctions, type BuiltFunction } from "../../scripts/bundle.mjs";
import { evaluateInfra, functionsOf, type InfraFunction } from "../../scripts/infra.mjs";
import { signedStripeEvent, startFakeStripe, type FakeStripe } from "../support/fake-stripe";
import { httpApiEvent, httpApiResponse, invokeBundle, lambdaSetup, type LinkForm, type LinkedValues } from "./lambda";

/**
 * Issue 9: every handler infra names (the API route and each CronV2 job) is bundled the way SST
 * deploys it (scripts/bundle.mjs) and invoked from the built file alone, in its own Node process,
 * with the SST_RESOURCE_* environment of exactly the resources infra links to it, against
 * DynamoDB Local. The list of handlers comes from evaluating sst.config.ts, so a function added to
 * infra is bundled and invoked here without touching this file.
 */
const infra = await evaluateInfra({ stage: "dev", env: { EMAIL_SENDER: "billing@example.com" } });
const functions = functionsOf(infra);
const routesOf = (fn: InfraFunction): string[] => (fn.trigger.kind === "api" ? fn.trigger.routes : []);
const apiFunctions = functions.filter((fn) => routesOf(fn).includes("$default"));
const documentFunctions = functions.filter((fn) => fn.handler.endsWith("/documents-api.handler"));
const paymentFunctions = functions.filter((fn) => fn.handler.endsWith("/payments-api.handler"));
const jobFunctions = functions.filter((fn) => fn.trigger.kind === "cron");
/** The route of `fn` that serves `path` (a real event carries its route key). */
const routeFor = (fn: InfraFunction, path: string): string => {
  const route = routesOf(fn).find((r) => new RegExp(`^${r.replace(/^\S+ /, "").replace(/\{\w+\}/g, "[^/]+")}$`).test(path));
  if (!route) throw new Error(`${fn.id} has no route for ${path}`);
  return route;
};

const endpoint = inject("dynamoEndpoint");
const linked: LinkedValues = {
  tableName: `test-bundles-${randomUUID()}`,
  emailSender: "billing@example.com",
  apiUrl: "https://abc123defg.execute-api.us-east-1.amazonaws.com",
};
const outdir = mkdtempSync(join(tmpdir(), "bundles-"));
const built = new Map<string, BuiltFunction>();
let db: Db;

beforeAll(async () => {
  for (const result of await bundleFunctions(functions, outdir)) built.set(result.id, result);
  const client = new DynamoDBClient({ endpoint, region: "local", credentials: { accessKeyId: "local", secretAccessKey: "local" } });
  await ensureTable(client, linked.tableName);
  client.destroy();
  db = createDb({ tableName: linked.tableName, dynamoEndpoint: endpoint, region: "local" });
});

afterAll(() => {
  db?.doc.destroy();
  rmSync(outdir, { recursive: true, force: true });
});

/** Invokes `fn`'s bundle with `events`, one warm container, as Lambda would. */
function invoke(fn: InfraFunction, events: unknown[], form: LinkForm = "environment", values: LinkedValues = linked, extraEnv: Record<string, string> = {}) {
  const bundle = built.get(fn.id);
  if (!bundle) throw new Error(`${fn.id} was not bundled`);
  const { env, files } = lambdaSetup(fn, values, endpoint, form);
  return invokeBundle(bundle.bundle, bundle.exportName, events, { ...env, ...extraEnv }, files);
}

/** The names of a user's clients, read from the linked table directly. */
async function storedClients(userId: string): Promise<string[]> {
  const stored = await db.doc.send(
    new QueryCommand({
      TableName: linked.tableName,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :client)",
      ExpressionAttributeValues: { ":pk": userPk(userId), ":client": "CLIENT#" },
    }),
  );
  return (stored.Items ?? []).map((item) => String(item.name)).sort();
}

describe.each(documentFunctions.map((fn) => [fn.id, fn] as const))("%s from its bundle", (_id, fn) => {
  it("answers its PDF routes with a PDF, and the spine's 401, 404 and 405", async () => {
    const userId = `bundle-${randomUUID().slice(0, 8)}`;
    const { key } = await createApiKey(db, userId, "bundle test", new Date());
    const ctx = { db, clock: () => new Date(), userId };
    const client = await createClient(ctx, { name: "Pdf Co" });
    const draft = await createInvoice(ctx, { clientId: client.id, lineItems: [{ description: "Work", unitPrice: "10.00" }] });
    const invoice = await finalizeInvoice(ctx, draft.id);
    const auth = { authorization: `Bearer ${key}` };
    const event = (method: string, path: string, headers?: Record<string, string>) =>
      httpApiEvent(method, path, { headers, routeKey: routeFor(fn, path) });

    const [owner, anonymous, publicPdf, unknownToken, wrongMethod, forged] = (
      await invoke(fn, [
        event("GET", `/invoices/${invoice.id}/pdf`, auth),
        event("GET", `/invoices/${invoice.id}/pdf`),
        event("GET", `/public/invoices/${invoice.publicToken}/pdf`),
        event("GET", `/public/invoices/${"A".repeat(32)}/pdf`),
        event("POST", `/invoices/${invoice.id}/pdf`, auth),
        event("GET", `/invoices/${invoice.id}/pdf`, { authorization: `Bearer inv_${userId}_${"A".repeat(43)}` }),
      ])
    ).map(httpApiResponse);

    for (const pdf of [owner!, publicPdf!]) {
      expect(pdf.status).toBe(200);
      expect(pdf.headers["content-type"]).toBe("application/pdf");
      expect(pdf.text.startsWith("%PDF-")).toBe(true);
    }
    expect(anonymous!.status).toBe(401);
    expect(forged!.status).toBe(401);
    expect(unknownToken!.status).toBe(404);
    expect(wrongMethod!.status).toBe(405);
    expect(wrongMethod!.headers.allow).toContain("GET");
  });
});

describe.each(paymentFunctions.map((fn) => [fn.id, fn] as const))("%s from its bundle", (_id, fn) => {
  let fake: FakeStripe;
  beforeAll(async () => {
    fake = await startFakeStripe();
  });
  afterAll(async () => {
    await fake?.close();
  });

  it("the pay link creates a checkout session at the card processor, and its signed webhook pays the invoice", async () => {
    const userId = `bundle-${randomUUID().slice(0, 8)}`;
    const ctx = { db, clock: () => new Date(), userId, publicBaseUrl: linked.apiUrl };
    const client = await createClient(ctx, { name: "Pay Co", email: "ap@pay.example" });
    const draft = await createInvoice(ctx, { clientId: client.id, lineItems: [{ description: "Work", unitPrice: "120.00" }] });
    await finalizeInvoice(ctx, draft.id);
    // Sent without a card processor here: the session is made when the link is opened.
    const invoice = await sendInvoice(ctx, draft.id, {});
    const webhookSecret = "whsec_bundle_test";
    const values: LinkedValues = { ...linked, secrets: { StripeSecretKey: "sk_test_bundle", StripeWebhookSecret: webhookSecret } };
    const stripeEnv = { STRIPE_API_BASE: fake.url };
    const pay = `/public/invoices/${invoice.publicToken}/pay`;

    const [redirect, wrongMethod] = (
      await invoke(fn, [
        httpApiEvent("GET", pay, { routeKey: routeFor(fn, pay) }),
        httpApiEvent("DELETE", pay, { routeKey: routeFor(fn, pay) }),
      ], "key-file", values, stripeEnv)
    ).map(httpApiResponse);
    expect(redirect!.status).toBe(303);
    const [session] = [...fake.sessions.values()].filter((s) => redirect!.headers.location === s.url);
    expect(session).toBeDefined();
    expect(session!.amount_total).toBe(12000);
    expect(redirect!.headers["content-security-policy"]).toContain("default-src 'none'");
    expect(wrongMethod!.status).toBe(405);

    const paid = fake.completeSession(session!.id);
    const { payload, header } = signedStripeEvent("checkout.session.completed", paid, { secret: webhookSecret, now: new Date() });
    const hook = "/webhooks/card-processor";
    const [accepted, unsigned] = (
      await invoke(fn, [
        httpApiEvent("POST", hook, { routeKey: routeFor(fn, hook), headers: { "content-type": "application/json", "stripe-signature": header }, body: payload }),
        httpApiEvent("POST", hook, { routeKey: routeFor(fn, hook), headers: { "content-type": "application/json" }, body: payload }),
      ], "key-file", values, stripeEnv)
    ).map(httpApiResponse);
    expect(accepted!.status).toBe(200);
    expect(unsigned!.status).toBe(400);
    expect(unsigned!.body).toMatchObject({ code: "invalid_signature" });
    const stored = await getInvoice(ctx, invoice.id, true);
    expect({ status: stored.status, amountPaid: stored.amountPaid, paymentMethod: stored.paymentMethod }).toEqual({
      status: "paid",
      amountPaid: "120.00",
      paymentMethod: "card",
    });
  });

  it("without the card processor's secrets (their placeholders), the pay link is 404 and every webhook 400", async () => {
    const userId = `bundle-${randomUUID().slice(0, 8)}`;
    const ctx = { db, clock: () => new Date(), userId, publicBaseUrl: linked.apiUrl };
    const client = await createClient(ctx, { name: "No Stripe Co" });
    const draft = await createInvoice(ctx, { clientId: client.id, lineItems: [{ description: "Work", unitPrice: "5.00" }] });
    await finalizeInvoice(ctx, draft.id);
    const invoice = await sendInvoice(ctx, draft.id, { to: "ap@nostripe.example" });
    const pay = `/public/invoices/${invoice.publicToken}/pay`;
    const hook = "/webhooks/card-processor";
    const [redirect, webhook] = (
      await invoke(fn, [
        httpApiEvent("GET", pay, { routeKey: routeFor(fn, pay) }),
        httpApiEvent("POST", hook, { routeKey: routeFor(fn, hook), headers: { "content-type": "application/json", "stripe-signature": "t=1,v1=00" }, body: "{}" }),
      ])
    ).map(httpApiResponse);
    expect(redirect!.status).toBe(404);
    expect(webhook!.status).toBe(400);
  });
});

it("infra names an API route, one documents and one payments function, and one scheduled function per job", () => {
  expect(apiFunctions.map((fn) => fn.trigger)).toEqual([{ kind: "api", api: "Api", routes: ["$default"] }]);
  expect(documentFunctions).toHaveLength(1);
  expect(paymentFunctions).toHaveLength(1);
  expect(jobFunctions.map(jobOf).sort()).toEqual([...JOB_NAMES].sort());
});

describe.each(apiFunctions.map((fn) => [fn.id, fn] as const))("%s from its bundle", (_id, fn) => {
  it("answers API Gateway HTTP API v2 events: query string, JSON body, base64 body, unknown route", async () => {
    const userId = `bundle-${randomUUID().slice(0, 8)}`;
    const { key } = await createApiKey(db, userId, "bundle test", new Date());
    const auth = { authorization: `Bearer ${key}` };
    const json = { ...auth, "content-type": "application/json" };

    const [health, created, createdBase64, firstPage, badQuery, unknown, anonymous] = (
      await invoke(fn, [
        httpApiEvent("GET", "/health"),
        httpApiEvent("POST", "/clients", { headers: json, body: JSON.stringify({ name: "Bundle Co", email: "ap@bundle.example" }) }),
        httpApiEvent("POST", "/clients", { headers: json, body: JSON.stringify({ name: "Base64 Ltd" }), base64: true }),
        httpApiEvent("GET", "/clients", { headers: auth, query: "limit=1" }),
        httpApiEvent("GET", "/clients", { headers: auth, query: "limit=abc" }),
        httpApiEvent("GET", "/no-such-route", { headers: auth }),
        httpApiEvent("GET", "/clients"),
      ])
    ).map(httpApiResponse);

    expect(health!.status).toBe(200);
    expect(health!.body).toEqual({ status: "ok" });

    expect(created!.status).toBe(201);
    expect(created!.body).toMatchObject({ name: "Bundle Co", email: "ap@bundle.example" });
    expect(created!.headers.location).toBe(`/clients/${created!.body.id}`);

    expect(createdBase64!.status).toBe(201);
    expect(createdBase64!.body).toMatchObject({ name: "Base64 Ltd" });

    // limit=1 reached the app: one client (the newest) and a Link to the next page.
    expect(firstPage!.status).toBe(200);
    expect(firstPage!.body).toEqual([expect.objectContaining({ name: "Base64 Ltd" })]);
    expect(firstPage!.headers.link).toMatch(/offset=1/);

    expect(badQuery!.status).toBe(400);
    expect(badQuery!.body).toMatchObject({ code: "validation_error" });

    expect(unknown!.status).toBe(404);
    expect(unknown!.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(unknown!.body).toMatchObject({ code: "not_found" });

    expect(anonymous!.status).toBe(401);

    // The writes went to the table SST linked (SST_RESOURCE_Table), nowhere else.
    expect(await storedClients(userId)).toEqual(["Base64 Ltd", "Bundle Co"]);
  });

  it("finds its links in SST's encrypted resource file, as a deployed function does", async () => {
    const userId = `bundle-${randomUUID().slice(0, 8)}`;
    const { key } = await createApiKey(db, userId, "bundle test", new Date());
    const [created] = (
      await invoke(
        fn,
        [httpApiEvent("POST", "/clients", { headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: '{"name":"Sealed Inc"}' })],
        "key-file",
      )
    ).map(httpApiResponse);
    expect(created!.status).toBe(201);
    expect(await storedClients(userId)).toEqual(["Sealed Inc"]);
  });
});

/** The job a CronV2 function runs: its handler file is packages/functions/src/jobs/<job>.ts. */
function jobOf(fn: InfraFunction): string {
  return basename(fn.handler.slice(0, fn.handler.lastIndexOf(".")));
}

describe.each(jobFunctions.map((fn) => [fn.id, fn] as const))("%s from its bundle", (_id, fn) => {
  it("runs its job once with the CronV2 event and returns the job's result", async (ctx) => {
    const name = jobOf(fn) as JobName;
    expect(JOB_NAMES).toContain(name);
    const before = new Date();
    const [result] = await invoke(fn, [fn.trigger.kind === "cron" ? fn.trigger.event : {}]);
    const after = new Date();

    if (!jobs[name]) {
      // Core has no such job yet: the bundle loads and refuses clearly. Asserts fully once it exists.
      expect(result).toEqual({ ok: false, error: { name: "JobNotImplementedError", message: expect.stringContaining(`"${name}"`) } });
      ctx.skip(`job "${name}" is not in packages/core/src/jobs/all.ts yet; its bundle loads and says so`);
    }

    if (!result?.ok) throw new Error(`${fn.id} threw: ${result?.error.name}: ${result?.error.message}`);
    const value = result.value as { job: string; now: string; changed: number };
    expect(value.job).toBe(name);
    const now = new Date(value.now);
    expect(now.toISOString()).toBe(value.now);
    expect(now.getTime()).toBeGreaterThanOrEqual(before.getTime());
    expect(now.getTime()).toBeLessThanOrEqual(after.getTime());
    // Nothing in this table is due (it holds only the API test's clients and keys).
    expect(value.changed).toBe(0);
  });
});
