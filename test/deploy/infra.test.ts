import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { JOB_NAMES } from "@invoicing/core/jobs/all";
import { componentsOf, evaluateInfra, functionsOf, linkNames, root, type InfraFunction } from "../../scripts/infra.mjs";

/**
 * Issue 9: what infra declares, evaluated offline (scripts/infra.mjs), against what the service
 * needs: least-privilege links, timeouts and memory that fit, CORS and access logs on the API,
 * production keeping its data, and docs/deploying.md telling the truth about the schedules.
 */
const sender = { EMAIL_SENDER: "billing@example.com" };
const dev = await evaluateInfra({ stage: "dev", env: sender });
const production = await evaluateInfra({ stage: "production", env: sender });

const only = (infra: typeof dev, kind: string) => {
  const found = componentsOf(infra, kind);
  expect(found).toHaveLength(1);
  return found[0]!;
};
const jobOf = (fn: InfraFunction) => fn.handler.replace(/^.*\/jobs\/([^/.]+)\.handler$/, "$1");
const isDefault = (fn: InfraFunction) => fn.trigger.kind === "api" && fn.trigger.routes.includes("$default");
const apiFunction = (infra: typeof dev) => functionsOf(infra).find(isDefault)!;
/** "api" for the $default function, "documents" / "payments" for those functions, else the job's name. */
const functionName = (fn: ReturnType<typeof functionsOf>[number]): string =>
  fn.trigger.kind === "api" ? (isDefault(fn) ? "api" : fn.id.toLowerCase()) : jobOf(fn);
const jobFunctions = (infra: typeof dev) => functionsOf(infra).filter((fn) => fn.trigger.kind === "cron");

/** "25 seconds" / "5 minutes" → seconds; "1024 MB" → MB. SST's own unit strings. */
function seconds(duration: string | undefined): number {
  const match = /^(\d+) (second|minute|hour)s?$/.exec(duration ?? "");
  if (!match) throw new Error(`not a duration: ${duration}`);
  return Number(match[1]) * { second: 1, minute: 60, hour: 3600 }[match[2] as "second" | "minute" | "hour"];
}
function megabytes(size: string | undefined): number {
  const match = /^(\d+) (MB|GB)$/.exec(size ?? "");
  if (!match) throw new Error(`not a size: ${size}`);
  return Number(match[1]) * (match[2] === "GB" ? 1024 : 1);
}
/** rate(15 minutes) → 900. */
function interval(schedule: string): number {
  const match = /^rate\((\d+ \w+)\)$/.exec(schedule);
  if (!match) throw new Error(`not a rate expression: ${schedule}`);
  return seconds(match[1]);
}

describe("stages", () => {
  it("production retains its resources, is protected, and its table refuses deletion", () => {
    expect(production.app).toMatchObject({ name: "invoicing", home: "aws", removal: "retain", protect: true });
    expect(only(production, "sst.aws.Dynamo").args.deletionProtection).toBe(true);
  });

  it("other stages are disposable: sst remove deletes them, table included", () => {
    expect(dev.app).toMatchObject({ name: "invoicing", home: "aws", removal: "remove", protect: false });
    expect(only(dev, "sst.aws.Dynamo").args.deletionProtection).toBe(false);
  });

  it("a deploy without EMAIL_SENDER stops with a message naming it", async () => {
    await expect(evaluateInfra({ stage: "dev", env: { EMAIL_SENDER: undefined } })).rejects.toThrow(/EMAIL_SENDER/);
  });

  it("the deploy outputs the API's URL", () => {
    expect(production.outputs.api).toBe(only(production, "sst.aws.ApiGatewayV2").url);
  });
});

describe("functions", () => {
  it("every function runs nodejs22.x on arm64", () => {
    const functions = functionsOf(production);
    expect(functions.length).toBeGreaterThanOrEqual(1 + JOB_NAMES.length);
    for (const fn of functions) expect({ id: fn.id, runtime: fn.runtime, architecture: fn.architecture }).toEqual({ id: fn.id, runtime: "nodejs22.x", architecture: "arm64" });
  });

  it("the API function stops before API Gateway's 30 s limit, with memory for a quick cold start", () => {
    const api = apiFunction(production);
    expect(seconds(api.timeout)).toBeLessThan(30);
    expect(megabytes(api.memory)).toBeGreaterThanOrEqual(512);
  });

  it("each job has a schedule, and a timeout that ends well before its next run", () => {
    const jobs = jobFunctions(production);
    expect(jobs.map(jobOf).sort()).toEqual([...JOB_NAMES].sort());
    for (const job of jobs) {
      if (job.trigger.kind !== "cron") throw new Error("not a cron job");
      expect(seconds(job.timeout), job.id).toBeLessThanOrEqual(interval(job.trigger.schedule) / 2);
      expect(seconds(job.timeout), job.id).toBeGreaterThanOrEqual(60);
      expect(megabytes(job.memory), job.id).toBeGreaterThanOrEqual(256);
      // CronV2 invokes with its event, {} by default; the jobs ignore it.
      expect(job.trigger.event).toEqual({});
    }
  });
});

describe("links: each function gets what it uses and nothing more", () => {
  /**
   * What each function needs, and why:
   * - every function reads and writes the table;
   * - emailing needs the sender and the API URL (public links in the email): the API (send), the
   *   recurring job (auto-send) and the reminders job (reminders, and the outbox sweep);
   * - creating a card payment link needs the processor's key: the API (send), payments (the pay
   *   link) and recurring (auto-send);
   * - verifying the processor's webhooks needs its webhook secret: the payments function alone;
   * - documents read the table and print the API's URL (the pay link).
   */
  const needs: Record<string, string[]> = {
    api: ["Table", "Email", "Api", "StripeSecretKey"],
    documents: ["Table", "Api"],
    payments: ["Table", "Api", "StripeSecretKey", "StripeWebhookSecret"],
    overdue: ["Table"],
    recurring: ["Table", "Email", "Api", "StripeSecretKey"],
    reminders: ["Table", "Email", "Api"],
    "expire-estimates": ["Table"],
  };

  it.each(["dev", "production"])("in %s", (stage) => {
    const infra = stage === "production" ? production : dev;
    const granted = Object.fromEntries(
      functionsOf(infra).map((fn) => [functionName(fn), linkNames(fn).sort()]),
    );
    expect(granted).toEqual(Object.fromEntries(Object.entries(needs).map(([fn, links]) => [fn, [...links].sort()])));
  });

  it("links name resources infra declares, of the kinds the functions read", () => {
    const kinds = Object.fromEntries(production.components.map((c) => [c.logicalName, c.kind]));
    expect(kinds).toMatchObject({
      Table: "sst.aws.Dynamo",
      Email: "sst.aws.Email",
      Api: "sst.aws.ApiGatewayV2",
      StripeSecretKey: "sst.sst.Secret",
      StripeWebhookSecret: "sst.sst.Secret",
    });
  });

  it("the card processor's secrets default to empty (no card payments), never to a value in the repo", () => {
    for (const secret of componentsOf(production, "sst.sst.Secret")) expect(secret.args.placeholder, secret.logicalName).toBe("");
  });
});

describe("the API", () => {
  const api = only(production, "sst.aws.ApiGatewayV2");

  it("routes everything to the app ($default) but documents and card payments, one function each", () => {
    const documentPaths = ["/invoices/{id}/pdf", "/public/invoices/{token}/pdf", "/estimates/{id}/pdf", "/public/estimates/{token}/pdf", "/invoices/{id}/e-invoice", "/public/invoices/{token}/e-invoice"];
    const paymentPaths = ["/public/invoices/{token}/pay", "/webhooks/card-processor"];
    expect(api.routes!.map((r) => r.rawRoute)).toEqual(["$default", ...[...documentPaths, ...paymentPaths].map((p) => `ANY ${p}`)]);
    const routed = functionsOf(production).filter((fn) => fn.trigger.kind === "api");
    expect(routed.map((fn) => [fn.id, fn.handler, fn.trigger])).toEqual([
      ["Api $default", "packages/functions/src/api.handler", { kind: "api", api: "Api", routes: ["$default"] }],
      ["Documents", "packages/functions/src/documents-api.handler", { kind: "api", api: "Api", routes: documentPaths.map((p) => `ANY ${p}`) }],
      ["Payments", "packages/functions/src/payments-api.handler", { kind: "api", api: "Api", routes: paymentPaths.map((p) => `ANY ${p}`) }],
    ]);
    // Routed by ARN: SST then points each route at that one Lambda instead of creating one per route.
    const shared = componentsOf(production, "sst.aws.Function");
    expect(shared.map((fn) => fn.logicalName)).toEqual(["Documents", "Payments"]);
    for (const route of api.routes!.slice(1)) expect(shared.map((fn) => fn.arn)).toContain(route.handler);
  });

  it("allows cross-origin calls with the headers the contract reads, and exposes the ones it sets", () => {
    const cors = api.args.cors as { allowOrigins: string[]; allowHeaders: string[]; exposeHeaders: string[]; allowMethods: string[] };
    expect(cors.allowOrigins).toEqual(["*"]);
    expect(cors.allowMethods).toEqual(["*"]);
    expect(cors.allowHeaders).toEqual(expect.arrayContaining(["authorization", "content-type", "idempotency-key", "if-match"]));
    expect(cors.exposeHeaders).toEqual(expect.arrayContaining(["etag", "location", "link", "idempotent-replayed", "x-request-id"]));
  });

  it("keeps access logs: a month, a year in production", () => {
    expect(api.args.accessLog).toEqual({ retention: "1 year" });
    expect(only(dev, "sst.aws.ApiGatewayV2").args.accessLog).toEqual({ retention: "1 month" });
  });
});

describe("docs/deploying.md", () => {
  const docs = readFileSync(join(root, "docs", "deploying.md"), "utf8");

  it("lists every job with the schedule infra gives it", () => {
    const documented = Object.fromEntries(
      [...docs.matchAll(/^\| `([a-z-]+)` \| `((?:rate|cron)\([^`]*\))` \|/gm)].map((m) => [m[1], m[2]]),
    );
    const declared = Object.fromEntries(
      jobFunctions(production).map((fn) => [jobOf(fn), fn.trigger.kind === "cron" ? fn.trigger.schedule : ""]),
    );
    expect(Object.keys(declared).length).toBe(JOB_NAMES.length);
    expect(documented).toEqual(declared);
  });

  it("shows the deploy and secret commands for the names infra uses", () => {
    expect(docs).toContain("npx sst deploy --stage production");
    for (const secret of componentsOf(production, "sst.sst.Secret")) expect(docs).toContain(`npx sst secret set ${secret.logicalName} `);
  });
});
