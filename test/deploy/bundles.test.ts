import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { GetCommand, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dynamoEndpoint } from "../support/dynamo-endpoint";
import { createDb, type Db } from "@invoicing/core/db/dynamodb";
import { entityKey, userPk } from "@invoicing/core/db/keys";
import { JOB_NAMES, type JobName } from "@invoicing/core/jobs/all";
import { createClient } from "@invoicing/core/clients/clients";
import { createInvoice, getInvoice } from "@invoicing/core/invoices/invoices";
import { finalizeInvoice, sendInvoice } from "@invoicing/core/invoices/lifecycle";
import { createApiKey } from "@invoicing/core/keys/api-keys";
import { updateProfile } from "@invoicing/core/profile/update";
import { EMBEDDED_FONT_FILES, EMBEDDED_FONT_PACKAGE } from "@invoicing/functions/pdf/font-files";
import { feedbackTags, recipientKey } from "@invoicing/core/email/bounces";
import { outboxKey, queueEmail } from "@invoicing/core/email/outbox";
import { signedStripeEvent } from "../support/fake-stripe";
import { createStripeCardProcessor } from "@invoicing/core/payments/stripe";
import { ensureTable } from "@invoicing/local/bootstrap";
import { bundleFunctions, type BuiltFunction } from "../../scripts/bundle.mjs";
import { evaluateInfra, functionsOf, root, type InfraFunction } from "../../scripts/infra.mjs";
import { startFakeSqs } from "../support/fake-sqs";
import { startFakeStripe, type FakeStripe } from "../support/fake-stripe";
import {
  httpApiEvent,
  httpApiResponse,
  invokeBundle,
  lambdaSetup,
  sesBounceEvent,
  snsEvent,
  type LinkForm,
  type LinkedValues,
} from "./lambda";
import { dynamoDbStreamEvent, startFakeEventBridge } from "./stream-event";

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
const documentFunctions = functions.filter((fn) => fn.handler.endsWith("/lambda/documents.handler"));
const paymentFunctions = functions.filter((fn) => fn.handler.endsWith("/lambda/payments.handler"));
const jobFunctions = functions.filter((fn) => fn.trigger.kind === "cron");
/** The route of `fn` that serves `path` (a real event carries its route key). */
const routeFor = (fn: InfraFunction, path: string): string => {
  const route = routesOf(fn).find((r) =>
    new RegExp(`^${r.replace(/^\S+ /, "").replace(/\{\w+\}/g, "[^/]+")}$`).test(path),
  );
  if (!route) throw new Error(`${fn.id} has no route for ${path}`);
  return route;
};
const streamFunctions = functions.filter((fn) => fn.trigger.kind === "stream");
const snsFunctions = functions.filter((fn) => fn.trigger.kind === "sns");
/** A work queue's Lambda worker (infra/queues.ts), by its queue's logical name. */
const workerOf = (queue: string): InfraFunction => {
  const found = functions.filter((fn) => fn.trigger.kind === "queue" && fn.trigger.queue === queue);
  expect(found, queue).toHaveLength(1);
  return found[0]!;
};

const endpoint = dynamoEndpoint();
/** Where the functions' linked work queues are (issue 37): a job run sends what is due there. */
const sqs = await startFakeSqs();
const linked: LinkedValues = {
  tableName: `test-bundles-${randomUUID()}`,
  emailSender: "billing@example.com",
  apiUrl: "https://abc123defg.execute-api.us-east-1.amazonaws.com",
  sqsUrl: sqs.url,
};
const outdir = mkdtempSync(join(tmpdir(), "bundles-"));
const built = new Map<string, BuiltFunction>();
let db: Db;

beforeAll(async () => {
  for (const result of await bundleFunctions(functions, outdir)) built.set(result.id, result);
  const client = new DynamoDBClient({
    endpoint,
    region: "local",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
  await ensureTable(client, linked.tableName);
  client.destroy();
  db = createDb({ tableName: linked.tableName, dynamoEndpoint: endpoint, region: "local" });
});

afterAll(() => sqs.close());
afterAll(() => {
  db?.doc.destroy();
  rmSync(outdir, { recursive: true, force: true });
});

/**
 * Invokes `fn`'s bundle with `events`, one warm container, as Lambda would: the task root is the
 * bundle's directory (the zip's root), unless `taskRoot` says otherwise. `extraEnv` adds variables
 * a test needs besides the links (STRIPE_API_BASE pointing at the fake Stripe).
 */
function invoke(
  fn: InfraFunction,
  events: unknown[],
  form: LinkForm = "environment",
  values: LinkedValues = linked,
  taskRoot?: string,
  extraEnv: Record<string, string> = {},
) {
  const bundle = built.get(fn.id);
  if (!bundle) throw new Error(`${fn.id} was not bundled`);
  const { env, files } = lambdaSetup(fn, values, endpoint, form, taskRoot ?? bundle.dir);
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
  it("answers its PDF routes with a PDF, and the shared middleware's 401, 404 and 405", async () => {
    const userId = `bundle-${randomUUID().slice(0, 8)}`;
    const { key } = await createApiKey(db, userId, "bundle test", new Date());
    const ctx = { db, clock: () => new Date(), userId };
    const client = await createClient(ctx, { name: "Pdf Co" });
    const draft = await createInvoice(ctx, {
      clientId: client.id,
      lineItems: [{ description: "Work", unitPrice: "10.00" }],
    });
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

  it("serves GET /openapi.json, built by walking every function's routes inside the bundle", async () => {
    const [openapi] = (
      await invoke(fn, [httpApiEvent("GET", "/openapi.json", { routeKey: routeFor(fn, "/openapi.json") })])
    ).map(httpApiResponse);
    expect(openapi!.status).toBe(200);
    expect(Object.keys(openapi!.body.paths)).toEqual(
      expect.arrayContaining(["/invoices/{id}/pdf", "/clients/{id}", "/webhooks/card-processor"]),
    );
  });

  it("draws the Factur-X with the fonts infra copies next to it (and cannot without them)", async () => {
    const userId = `bundle-${randomUUID().slice(0, 8)}`;
    const ctx = { db, clock: () => new Date(), userId };
    await updateProfile(ctx, {
      businessName: "Muster Design",
      address: { line1: "Hauptstraße 1", city: "Berlin", postalCode: "10115", country: "DE" },
      taxId: "DE123456789",
      email: "rechnung@muster-design.de",
    });
    const client = await createClient(ctx, {
      name: "Beispiel AG",
      currency: "EUR",
      address: { line1: "Marktplatz 5", city: "München", postalCode: "80331", country: "DE" },
    });
    const draft = await createInvoice(ctx, {
      clientId: client.id,
      lineItems: [{ description: "Beratung", unitPrice: "100.00", taxRate: "0.19" }],
    });
    const invoice = await finalizeInvoice(ctx, draft.id);
    const path = `/public/invoices/${invoice.publicToken}/e-invoice`;
    const event = httpApiEvent("GET", path, { query: "format=facturx", routeKey: routeFor(fn, path) });
    const copied = (fn.copyFiles ?? []).map((copy) => copy.to ?? copy.from);
    expect(copied).toEqual(
      expect.arrayContaining(Object.values(EMBEDDED_FONT_FILES).map((file) => `${EMBEDDED_FONT_PACKAGE}/${file}`)),
    );

    const [facturx] = (await invoke(fn, [event])).map(httpApiResponse);
    expect(facturx!.status).toBe(200);
    expect(facturx!.headers["content-type"]).toBe("application/pdf");
    const bare = mkdtempSync(join(tmpdir(), "task-root-"));
    try {
      const [without] = (await invoke(fn, [event], "environment", linked, bare)).map(httpApiResponse);
      expect(without!.status).toBe(500);
      expect(without!.text).not.toContain("arimo"); // the cause is logged, never shown
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });
});

const isModule = (file: string) => file.startsWith("node_modules/");
const { version: stripeVersion } = JSON.parse(readFileSync(join(root, "node_modules/stripe/package.json"), "utf8")) as {
  version: string;
};

describe("the bundles are laid out as SST 4.17.1 packs a function's zip", () => {
  it("bundle.mjs with SST's banner and a linked source map that stays out of the zip; copyFiles in it", () => {
    expect(built.size).toBe(functions.length);
    for (const fn of functions) {
      const bundle = built.get(fn.id)!;
      expect(bundle.bundle.endsWith("/bundle.mjs"), fn.id).toBe(true);
      const code = readFileSync(bundle.bundle, "utf8");
      expect(code.startsWith("import { createRequire as topLevelCreateRequire } from 'module';"), fn.id).toBe(true);
      expect(code.trimEnd().endsWith("//# sourceMappingURL=bundle.mjs.map"), fn.id).toBe(true);
      expect(existsSync(`${bundle.bundle}.map`), fn.id).toBe(true);
      const copied = (fn.copyFiles ?? []).map((copy) => copy.to ?? copy.from);
      // SST uploads the map to its bootstrap bucket unless nodejs.sourcemap is true.
      const [modules, rest] = [bundle.zip.filter(isModule), bundle.zip.filter((f) => !isModule(f))];
      // nodejs.splitting (the API function): the chunks beside bundle.mjs, each with the banner too.
      const chunks = rest.filter((f) => f !== "bundle.mjs" && f.endsWith(".mjs"));
      expect(chunks.length > 0, fn.id).toBe(fn.nodejs?.splitting === true);
      for (const chunk of chunks)
        expect(readFileSync(join(bundle.dir, chunk), "utf8"), chunk).toMatch(
          /^import \{ createRequire as topLevelCreateRequire \}/,
        );
      expect(rest, fn.id).toEqual(["bundle.mjs", ...chunks, ...copied].sort());
      // nodejs.install: each package (with what it depends on) in node_modules/, not in the bundle.
      const declared = fn.nodejs?.install ?? [];
      const install = Array.isArray(declared) ? declared : Object.keys(declared);
      for (const name of install) {
        expect(modules, fn.id).toContain(`node_modules/${name}/package.json`);
        expect(code, fn.id).not.toContain(`node_modules/${name}/`);
      }
      if (install.length === 0) expect(modules, fn.id).toEqual([]);
    }
  });

  it("a package installed beside a bundle at a version other than the lock file's is refused", async () => {
    // SST npm-installs that version at deploy: the zip would not hold what the tests ran against.
    const dir = mkdtempSync(join(tmpdir(), "install-version-"));
    try {
      const fn = { id: "Pinned", handler: "bench/baseline/handler.handler", runtime: "nodejs22.x" };
      await expect(bundleFunctions([{ ...fn, nodejs: { install: { stripe: "22.0.0" } } }], dir)).rejects.toThrow(
        /stripe@22\.0\.0 is declared, but node_modules holds 23\./,
      );
      const [pinned] = await bundleFunctions([{ ...fn, nodejs: { install: { stripe: stripeVersion } } }], dir);
      expect(pinned!.zip).toContain("node_modules/stripe/package.json");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the Documents function ships Swagger UI's files, and serves /docs from them", async () => {
    const [api] = documentFunctions;
    expect(built.get(api!.id)!.zip).toEqual(
      expect.arrayContaining(["swagger-ui-dist/swagger-ui-bundle.js", "swagger-ui-dist/swagger-ui.css"]),
    );
    const swagger = readFileSync(join(built.get(api!.id)!.dir, "swagger-ui-dist", "swagger-ui-bundle.js"), "utf8");
    const docsEvent = () => httpApiEvent("GET", "/docs", { routeKey: routeFor(api!, "/docs") });
    const [docs] = (await invoke(api!, [docsEvent()])).map(httpApiResponse);
    expect(docs!.status).toBe(200);
    expect(docs!.headers["content-type"]).toMatch(/^text\/html/);
    expect(docs!.text).toContain(swagger.slice(0, 2000));
    expect(docs!.text).not.toContain("not installed in this deployment");

    // Not vacuous: the same bundle in a task root without the copied files has no renderer.
    const bare = mkdtempSync(join(tmpdir(), "task-root-"));
    try {
      const [without] = (await invoke(api!, [docsEvent()], "environment", linked, bare)).map(httpApiResponse);
      expect(without!.status).toBe(200);
      expect(without!.text).toContain("not installed in this deployment");
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });
});

describe("the card processor's webhook before and after its secret is deployed", () => {
  const webhookSecret = "whsec_bundle_order_test";
  const withKey: LinkedValues = { ...linked, secrets: { StripeSecretKey: "sk_test_bundle_order" } };
  const withBoth: LinkedValues = {
    ...linked,
    secrets: { StripeSecretKey: "sk_test_bundle_order", StripeWebhookSecret: webhookSecret },
  };

  it("first deploy (no webhook secret): 503 service_unavailable naming the secret; second deploy: verified", async () => {
    // The webhook is the payments function's (infra/api.ts).
    const [api] = paymentFunctions;
    const event = signedStripeEvent(
      "checkout.session.completed",
      { id: "cs_test_order", object: "checkout.session" },
      {
        secret: webhookSecret,
        now: new Date(),
      },
    );
    const delivery = () =>
      httpApiEvent("POST", "/webhooks/card-processor", {
        routeKey: "ANY /webhooks/card-processor",
        headers: { "content-type": "application/json", "stripe-signature": event.header },
        body: event.payload,
      });

    const [waiting] = (await invoke(api!, [delivery()], "environment", withKey)).map(httpApiResponse);
    expect(waiting!.status).toBe(503);
    expect(waiting!.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(waiting!.headers["retry-after"]).toBeDefined();
    expect(waiting!.body).toMatchObject({ status: 503, code: "service_unavailable" });
    expect(waiting!.body.detail).toMatch(/card payments are not configured.*StripeWebhookSecret/);

    // Stripe's retry of the same event after `sst secret set StripeWebhookSecret …` and a deploy.
    const [verified] = (await invoke(api!, [delivery()], "environment", withBoth)).map(httpApiResponse);
    expect(verified!.status).toBe(200);
    expect(verified!.body).toMatchObject({ received: true });

    // A forged delivery is still refused once the secret is there.
    const forged = signedStripeEvent(
      "checkout.session.completed",
      { id: "cs_forged" },
      { secret: "whsec_other", now: new Date() },
    );
    const [refused] = (
      await invoke(
        api!,
        [
          httpApiEvent("POST", "/webhooks/card-processor", {
            routeKey: "ANY /webhooks/card-processor",
            headers: { "stripe-signature": forged.header },
            body: forged.payload,
          }),
        ],
        "environment",
        withBoth,
      )
    ).map(httpApiResponse);
    expect(refused!.status).toBe(400);
    expect(refused!.body.code).toBe("invalid_signature");
  });
});

describe.each(snsFunctions.map((fn) => [fn.id, fn] as const))("%s from its bundle", (_id, fn) => {
  it("marks the email and the recipient from SES's bounce, delivered by SNS; ignores what is not ours", async () => {
    const userId = `bounce-${randomUUID().slice(0, 8)}`;
    const deps = { db, clock: () => new Date() };
    const queued = queueEmail(deps, userId, { to: "Gone@Client.example", subject: "Invoice INV-000001", text: "…" });
    // Stored as delivered (off the outbox's due list, so the jobs' bundles below find nothing to send).
    const { duePk: _duePk, dueSk: _dueSk, ...sent } = queued.item;
    await db.doc.send(
      new PutCommand({ TableName: linked.tableName, Item: { ...sent, status: "sent", sentAt: sent.createdAt } }),
    );
    const tags = feedbackTags(userId, queued.item.id);
    const topic = "arn:aws:sns:us-east-1:123456789012:invoicing-dev-EmailFeedback";

    const [result] = await invoke(fn, [
      snsEvent(topic, [
        sesBounceEvent({ recipient: "gone@client.example", tags }),
        sesBounceEvent({ recipient: "other@client.example", tags: [] }), // not one of ours
        { eventType: "Delivery", mail: { tags: {} } },
      ]),
    ]);
    if (!result?.ok) throw new Error(`${fn.id} threw: ${result?.error.name}: ${result?.error.message}`);
    expect(result.value).toEqual({ recorded: 1, emailGone: 0, ignored: 2 });

    const email = await db.doc.send(
      new GetCommand({ TableName: linked.tableName, Key: outboxKey(userId, queued.item.id) }),
    );
    expect(email.Item).toMatchObject({ status: "sent", delivery: "bounced", deliveryDetail: "Permanent/NoEmail" });
    const recipient = await db.doc.send(
      new GetCommand({ TableName: linked.tableName, Key: recipientKey(userId, "gone@client.example") }),
    );
    expect(recipient.Item).toMatchObject({ type: "recipient", address: "gone@client.example", delivery: "bounced" });
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
    // Sent without a card processor here: the session is made when the link is opened.
    const invoice = await sentInvoice(ctx, { name: "Pay Co", email: "ap@pay.example" }, "120.00");
    const webhookSecret = "whsec_bundle_test";
    const values: LinkedValues = {
      ...linked,
      secrets: { StripeSecretKey: "sk_test_bundle", StripeWebhookSecret: webhookSecret },
    };
    const stripeEnv = { STRIPE_API_BASE: fake.url };
    const pay = `/public/invoices/${invoice.publicToken}/pay`;

    const [redirect, wrongMethod] = (
      await invoke(
        fn,
        [
          httpApiEvent("GET", pay, { routeKey: routeFor(fn, pay) }),
          httpApiEvent("DELETE", pay, { routeKey: routeFor(fn, pay) }),
        ],
        "key-file",
        values,
        undefined,
        stripeEnv,
      )
    ).map(httpApiResponse);
    expect(redirect!.status).toBe(303);
    const [session] = [...fake.sessions.values()].filter((s) => redirect!.headers.location === s.url);
    expect(session).toBeDefined();
    expect(session!.amount_total).toBe(12000);
    expect(redirect!.headers["content-security-policy"]).toContain("default-src 'none'");
    expect(wrongMethod!.status).toBe(405);

    const paid = fake.completeSession(session!.id);
    const { payload, header } = signedStripeEvent("checkout.session.completed", paid, {
      secret: webhookSecret,
      now: new Date(),
    });
    const hook = "/webhooks/card-processor";
    const [accepted, unsigned] = (
      await invoke(
        fn,
        [
          httpApiEvent("POST", hook, {
            routeKey: routeFor(fn, hook),
            headers: { "content-type": "application/json", "stripe-signature": header },
            body: payload,
          }),
          httpApiEvent("POST", hook, {
            routeKey: routeFor(fn, hook),
            headers: { "content-type": "application/json" },
            body: payload,
          }),
        ],
        "key-file",
        values,
        undefined,
        stripeEnv,
      )
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
    const draft = await createInvoice(ctx, {
      clientId: client.id,
      lineItems: [{ description: "Work", unitPrice: "5.00" }],
    });
    await finalizeInvoice(ctx, draft.id);
    const invoice = await sendInvoice(ctx, draft.id, { to: "ap@nostripe.example" });
    const pay = `/public/invoices/${invoice.publicToken}/pay`;
    const hook = "/webhooks/card-processor";
    const [redirect, webhook] = (
      await invoke(fn, [
        httpApiEvent("GET", pay, { routeKey: routeFor(fn, pay) }),
        httpApiEvent("POST", hook, {
          routeKey: routeFor(fn, hook),
          headers: { "content-type": "application/json", "stripe-signature": "t=1,v1=00" },
          body: "{}",
        }),
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
        httpApiEvent("POST", "/clients", {
          headers: json,
          body: JSON.stringify({ name: "Bundle Co", email: "ap@bundle.example" }),
        }),
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

  it("holds no pdf-lib: the PDF routes reach it only through the documents function's app (http/pdf-renderer.ts)", () => {
    const code = readFileSync(built.get(fn.id)!.bundle, "utf8");
    expect(code).not.toMatch(/StandardFonts|PDFDocument/);
    const pdf = documentFunctions[0];
    if (pdf) expect(readFileSync(built.get(pdf.id)!.bundle, "utf8")).toMatch(/StandardFonts/);
  });

  it("finds its links in SST's encrypted resource file, as a deployed function does", async () => {
    const userId = `bundle-${randomUUID().slice(0, 8)}`;
    const { key } = await createApiKey(db, userId, "bundle test", new Date());
    const [created] = (
      await invoke(
        fn,
        [
          httpApiEvent("POST", "/clients", {
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
            body: '{"name":"Sealed Inc"}',
          }),
        ],
        "key-file",
      )
    ).map(httpApiResponse);
    expect(created!.status).toBe(201);
    expect(await storedClients(userId)).toEqual(["Sealed Inc"]);
  });
});

/** The job a CronV2 function runs: its handler file is packages/functions/src/lambda/jobs/<job>.ts. */
function jobOf(fn: InfraFunction): string {
  return basename(fn.handler.slice(0, fn.handler.lastIndexOf(".")));
}

describe.each(jobFunctions.map((fn) => [fn.id, fn] as const))("%s from its bundle", (_id, fn) => {
  it("runs its job once with the CronV2 event and returns the job's result", async () => {
    const name = jobOf(fn) as JobName;
    expect(JOB_NAMES).toContain(name);
    const before = new Date();
    const [result] = await invoke(fn, [fn.trigger.kind === "cron" ? fn.trigger.event : {}]);
    const after = new Date();

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

/** All the code of a function's zip: the bundle and its chunks. */
const codeOf = (fn: InfraFunction): string => {
  const { dir, zip } = built.get(fn.id)!;
  return zip
    .filter((f) => f.endsWith(".mjs") && !isModule(f))
    .map((f) => readFileSync(join(dir, f), "utf8"))
    .join("\n");
};

it("the API function's bundle carries neither SES nor pdf-lib: email is delivered by the outbox queue's worker", () => {
  for (const fn of apiFunctions) {
    const code = codeOf(fn);
    expect(code).toMatch(/finalizeInvoice/);
    expect(code).not.toMatch(/SESv2Client|SendEmailCommand/);
    expect(code).not.toMatch(/PDFDocument|pdf-lib/);
  }
  expect(readFileSync(built.get(workerOf("OutboxQueue").id)!.bundle, "utf8")).toMatch(/SendEmailCommand/);
  // The subscriber hands emails on (issue 37): it carries no SES.
  for (const fn of streamFunctions) expect(codeOf(fn)).not.toMatch(/SESv2Client|SendEmailCommand/);
});

it("the outbox worker keeps pdf-lib beside its bundle and imports it only at the first PDF", () => {
  // Issue 37: the subscriber and the reminders job hand emails on; the outbox worker draws the PDFs.
  const drawers = [workerOf("OutboxQueue")];
  for (const fn of [...streamFunctions, ...jobFunctions]) expect(codeOf(fn), fn.id).not.toMatch(/pdf-lib/);
  for (const fn of drawers) {
    const { bundle, zip } = built.get(fn.id)!;
    const code = readFileSync(bundle, "utf8");
    // Inlined, pdf-lib's classes keep their names as strings (keepNames); a static import would be
    // hoisted to the top and evaluate pdf-lib at every cold start.
    expect(code, fn.id).not.toMatch(/["']PDFDocument["']|from\s*["']pdf-lib["']/);
    expect(code, fn.id).toMatch(/import\(\s*["']pdf-lib["']\s*\)/);
    expect(zip, fn.id).toContain("node_modules/pdf-lib/package.json");
  }
});

it("the checkout-expiry worker carries Stripe's SDK; the subscriber, which hands expiries on, carries none", () => {
  expect(readFileSync(built.get(workerOf("CheckoutExpiryQueue").id)!.bundle, "utf8")).toMatch(/["']StripeError["']/);
  for (const fn of streamFunctions)
    expect(codeOf(fn), fn.id).not.toMatch(/["']StripeError["']|import\(\s*["']stripe["']\s*\)/);
  // The same pattern finds the SDK where it is inlined: Payments uses it at nearly every cold start.
  for (const fn of paymentFunctions)
    expect(readFileSync(built.get(fn.id)!.bundle, "utf8")).toMatch(/["']StripeError["']/);
});

it("the peppol worker carries the Peppol UBL writer; the subscriber, which hands Peppol sends on, carries none", () => {
  const ubl = /poacc:billing:3\.0/;
  expect(codeOf(workerOf("PeppolQueue"))).toMatch(ubl);
  expect(codeOf(workerOf("PeppolQueue"))).not.toMatch(/pdf-lib/);
  for (const fn of streamFunctions) expect(codeOf(fn), fn.id).not.toMatch(ubl);
});

it("infra subscribes one function to the table's stream, reporting batch item failures", () => {
  expect(streamFunctions.map((fn) => fn.handler)).toEqual(["packages/functions/src/lambda/stream.handler"]);
  const mapping: Record<string, unknown> = {};
  const trigger = streamFunctions[0]!.trigger as {
    transform?: { eventSourceMapping?: (args: Record<string, unknown>) => void };
  };
  trigger.transform?.eventSourceMapping?.(mapping);
  expect(mapping.functionResponseTypes).toEqual(["ReportBatchItemFailures"]);
});

describe.each(streamFunctions.map((fn) => [fn.id, fn] as const))("%s from its bundle", (_id, fn) => {
  it("turns a DynamoDB Streams event into one stored event however often it comes, and the same event on the bus per delivery", async () => {
    const bus = await startFakeEventBridge();
    try {
      const userId = `bundle-${randomUUID().slice(0, 8)}`;
      const ctx = { db, clock: () => new Date(), userId };
      const client = await createClient(ctx, { name: "Streamed GmbH", email: "ap@streamed.example" });
      const event = dynamoDbStreamEvent([
        { eventName: "INSERT", newImage: client as unknown as Record<string, unknown> },
      ]);
      const { env, files } = lambdaSetup(fn, linked, endpoint);
      const results = await invokeBundle(
        built.get(fn.id)!.bundle,
        built.get(fn.id)!.exportName,
        [event, event],
        { ...env, EVENTBRIDGE_ENDPOINT: bus.url },
        files,
      );
      for (const result of results) expect(result).toEqual({ ok: true, value: { batchItemFailures: [] } });

      const stored = await db.doc.send(
        new QueryCommand({
          TableName: linked.tableName,
          KeyConditionExpression: "pk = :pk AND begins_with(sk, :event)",
          ExpressionAttributeValues: { ":pk": userPk(userId), ":event": "EVENT#" },
        }),
      );
      expect(stored.Items?.map((item) => item.type)).toEqual(["client.created"]);
      expect(JSON.parse(String(stored.Items![0]!.data))).toMatchObject({ id: client.id, name: "Streamed GmbH" });
      // The bus is at least once: each delivery of the record put the event on it.
      expect(bus.entries.map((e) => [e.Source, e.DetailType, e.EventBusName])).toEqual([
        ["invoicing", "client.created", "invoicing-dev-BusBus"],
        ["invoicing", "client.created", "invoicing-dev-BusBus"],
      ]);
      expect(JSON.parse(bus.entries[0]!.Detail)).toMatchObject({
        type: "client.created",
        resourceType: "client",
        resourceId: client.id,
      });
      // The same event each time, with the stored event's id, so a consumer can drop the repeat.
      const ids = bus.entries.map((e) => JSON.parse(e.Detail).id);
      expect(ids).toEqual([stored.Items![0]!.id, stored.Items![0]!.id]);
    } finally {
      await bus.close();
    }
  });

  it("hands a voided invoice's checkout session to its queue, whose worker's bundle expires it at the card processor", async () => {
    const [bus, fake, sqs] = await Promise.all([startFakeEventBridge(), startFakeStripe(), startFakeSqs()]);
    try {
      const secrets = { StripeSecretKey: "sk_test_bundle", StripeWebhookSecret: "whsec_bundle_test" };
      const userId = `bundle-${randomUUID().slice(0, 8)}`;
      const ctx = { db, clock: () => new Date(), userId };
      const invoice = await sentInvoice(ctx, { name: "Voided Ltd", email: "ap@voided.example" }, "80.00");
      const session = await createStripeCardProcessor({
        secretKey: secrets.StripeSecretKey,
        webhookSecret: secrets.StripeWebhookSecret,
        apiBase: fake.url,
      }).createCheckoutSession({
        userId,
        invoiceId: invoice.id,
        invoiceNumber: invoice.invoiceNumber!,
        amountCents: 8000n,
        currency: "USD",
        successUrl: `${linked.apiUrl}/public/invoices/${invoice.publicToken}`,
        cancelUrl: `${linked.apiUrl}/public/invoices/${invoice.publicToken}`,
        idempotencyKey: `bundle-${userId}`,
      });
      const stored = await db.doc.send(
        new GetCommand({ TableName: linked.tableName, Key: entityKey(userId, "INVOICE", invoice.id) }),
      );
      const open = {
        ...stored.Item!,
        cardProcessorCheckoutSessionId: session.id,
        cardProcessorSessionExpiresAt: session.expiresAt,
      };
      const event = dynamoDbStreamEvent([
        {
          eventName: "MODIFY",
          oldImage: open,
          newImage: { ...open, status: "void", voidedAt: new Date().toISOString() },
        },
      ]);
      const { env, files } = lambdaSetup(fn, { ...linked, secrets, sqsUrl: sqs.url }, endpoint, "key-file");
      const [result] = await invokeBundle(
        built.get(fn.id)!.bundle,
        built.get(fn.id)!.exportName,
        [event],
        { ...env, EVENTBRIDGE_ENDPOINT: bus.url, STRIPE_API_BASE: fake.url },
        files,
      );
      expect(result).toEqual({ ok: true, value: { batchItemFailures: [] } });
      // The subscriber called no processor: it sent the ended session to the checkout-expiry queue.
      expect(fake.requests.filter((r) => r.path.endsWith("/expire"))).toEqual([]);
      expect(sqs.messages.map((m) => m.queueUrl)).toEqual([
        `${sqs.url}/123456789012/invoicing-dev-CheckoutExpiryQueueQueue`,
      ]);
      // The queue's worker, from its own bundle, with an SQS event carrying that message.
      const worker = workerOf("CheckoutExpiryQueue");
      const setup = lambdaSetup(worker, { ...linked, secrets }, endpoint, "key-file");
      const sqsEvent = {
        Records: sqs.messages.map((m, i) => ({ messageId: `m${i}`, body: m.body, eventSource: "aws:sqs" })),
      };
      const [handled] = await invokeBundle(
        built.get(worker.id)!.bundle,
        built.get(worker.id)!.exportName,
        [sqsEvent],
        { ...setup.env, STRIPE_API_BASE: fake.url },
        setup.files,
      );
      expect(handled).toEqual({ ok: true, value: { batchItemFailures: [] } });
      const expiries = fake.requests.filter((r) => r.method === "POST" && r.path.endsWith("/expire"));
      expect(expiries.map((r) => r.path)).toEqual([`/v1/checkout/sessions/${session.id}/expire`]);
      expect(fake.sessions.get(session.id)!.status).toBe("expired");
    } finally {
      await Promise.all([bus.close(), fake.close(), sqs.close()]);
    }
  });
});

/** A one-line invoice of `unitPrice` to a new client, finalized and sent through core's use cases. */
async function sentInvoice(
  ctx: Parameters<typeof createClient>[0],
  client: { name: string; email: string },
  unitPrice: string,
) {
  const { id: clientId } = await createClient(ctx, client);
  const draft = await createInvoice(ctx, { clientId, lineItems: [{ description: "Work", unitPrice }] });
  await finalizeInvoice(ctx, draft.id);
  return sendInvoice(ctx, draft.id, {});
}

/**
 * Issue 39 item 8: every HTTP function runs its requests under the invocation's deadline (the
 * Lambda's remaining time less a margin; functions/src/lambda/deadline.ts). Invoked with less time
 * left than the margin, a request's first table call (the key's lookup, the token's) stops at once:
 * a clean 503 with Retry-After, not a Lambda killed at its timeout.
 */
describe("the invocation's deadline, from each HTTP function's bundle", () => {
  const cases = [
    ["Api", () => apiFunctions[0]!, "/clients"],
    ["Documents", () => documentFunctions[0]!, "/invoices/1/pdf"],
    ["Payments", () => paymentFunctions[0]!, "/public/invoices/abcdefghijklmnopqrstuvwxyz012345/pay"],
  ] as const;
  it.each(cases)(
    "%s: a request with less time left than the margin answers 503, its calls stopped",
    async (_name, fnOf, path) => {
      const fn = fnOf();
      const routeKey = routesOf(fn).includes("$default") ? "$default" : routeFor(fn, path);
      const event = httpApiEvent("GET", path, {
        routeKey,
        headers: { Authorization: `Bearer inv_nobody_${"x".repeat(43)}` },
      });
      const [answer] = (await invoke(fn, [event], "environment", linked, undefined, { INVOKE_TIMEOUT_MS: "1000" })).map(
        httpApiResponse,
      );
      expect(answer!.status).toBe(503);
      expect(answer!.body.type).toMatch(/service_unavailable$/);
      expect(answer!.headers["retry-after"]).toBeDefined();
    },
  );
});
