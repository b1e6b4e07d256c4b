import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { JOB_NAMES } from "@invoicing/core/jobs/all";
import { documentRouteModules } from "@invoicing/functions/app/documents-routes";
import { paymentRouteModules } from "@invoicing/functions/app/payments-routes";
import { pathsOf } from "@invoicing/functions/app/function-paths";
import { accessLogFormat, withAccessLogFormat } from "../../infra/access-log";
import type { apiStage } from "../../infra/stage";
import {
  componentsOf,
  evaluateInfra,
  functionsOf,
  linkNames,
  linkPermissions,
  root,
  type InfraFunction,
} from "../../scripts/infra.mjs";
import { IN_CI, skipNotice } from "../support/ci";

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
/** "api" for the $default function, "documents" / "payments", "email-feedback", "stream", else the job's name. */
const functionName = (fn: ReturnType<typeof functionsOf>[number]): string =>
  fn.trigger.kind === "api"
    ? isDefault(fn)
      ? "api"
      : fn.id.toLowerCase()
    : fn.trigger.kind === "sns"
      ? "email-feedback"
      : fn.trigger.kind === "stream"
        ? "stream"
        : fn.trigger.kind === "queue"
          ? `worker:${fn.trigger.queue}`
          : jobOf(fn);
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

  it("dev and production take their sender from infra/stages.ts: a shell or .env.<stage> may not change it", async () => {
    await expect(evaluateInfra({ stage: "production", env: { EMAIL_SENDER: "other@example.com" } })).rejects.toThrow(
      /EMAIL_SENDER=other@example.com differs from production's sender .* infra\/stages.ts/,
    );
    // Without anything in the environment, the map's sender.
    const bare = await evaluateInfra({ stage: "production", env: { EMAIL_SENDER: undefined } });
    expect(only(bare, "sst.aws.Email").args).toEqual({ sender: "billing@example.com" });
  });

  it("the deploy outputs the public base URL (the stage's domain) and API Gateway's own", () => {
    expect(production.outputs.url).toBe("https://api.example.com");
    expect(production.outputs.api).toBe(only(production, "sst.aws.ApiGatewayV2").url);
  });
});

describe("functions", () => {
  it("every function runs nodejs22.x on arm64", () => {
    const functions = functionsOf(production);
    expect(functions.length).toBeGreaterThanOrEqual(1 + JOB_NAMES.length);
    for (const fn of functions)
      expect({ id: fn.id, runtime: fn.runtime, architecture: fn.architecture }).toEqual({
        id: fn.id,
        runtime: "nodejs22.x",
        architecture: "arm64",
      });
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
   * - emailing needs the sender and the API URL (public links in the email): the stream subscriber
   *   (every delivery), the recurring job (auto-send) and the reminders job (the outbox sweep); the
   *   API only queues emails, so it has no sender;
   * - the stream subscriber puts every event on the bus;
   * - whether card payments are on (the CardPayments flag, never the key): the API and recurring
   *   (send stores the pay link when a processor is set);
   * - the card processor's key: payments (the pay link's checkout sessions, refunds) and the stream
   *   subscriber (it expires the session of an invoice that became void or paid);
   * - the recurring job only queues emails (the subscriber delivers them): no sender;
   * - verifying the processor's webhooks needs its webhook secret: the payments function alone;
   * - documents read the table and print the API's URL (the pay link).
   * Issue 37: the jobs and the stream subscriber hand their work to queues (infra/queues.ts): a
   * job's dispatcher links the table and its queue(s) (send only); the subscriber the table, the
   * bus and the outbox, webhooks, checkout-expiry and peppol queues; each queue's worker what its work needs.
   */
  const needs: Record<string, string[]> = {
    api: ["Table", "PublicUrl", "CardPayments", "StorecoveApiKey"],
    documents: ["Table", "PublicUrl"],
    payments: ["Table", "PublicUrl", "StripeSecretKey", "StripeWebhookSecret"],
    overdue: ["Table", "OverdueQueue"],
    "email-feedback": ["Table"],
    recurring: ["Table", "RecurringQueue"],
    reminders: ["Table", "RemindersQueue", "OutboxQueue"],
    "expire-estimates": ["Table", "ExpireEstimatesQueue"],
    webhooks: ["Table", "WebhooksQueue"],
    stream: ["Table", "Bus", "OutboxQueue", "WebhooksQueue", "CheckoutExpiryQueue", "PeppolQueue"],
    // The Peppol provider's key: only where the provider is called (registration and the receiver
    // lookup in the API, the first hand-over in the peppol queue's worker, retries and polls in the job).
    peppol: ["Table", "StorecoveApiKey"],
    "worker:OverdueQueue": ["Table"],
    "worker:RecurringQueue": ["Table", "PublicUrl", "CardPayments"],
    "worker:RemindersQueue": ["Table", "PublicUrl"],
    "worker:ExpireEstimatesQueue": ["Table"],
    "worker:OutboxQueue": ["Table", "Email", "PublicUrl"],
    "worker:WebhooksQueue": ["Table"],
    "worker:CheckoutExpiryQueue": ["Table", "StripeSecretKey"],
    "worker:PeppolQueue": ["Table", "StorecoveApiKey"],
  };

  it.each(["dev", "production"])("in %s", (stage) => {
    const infra = stage === "production" ? production : dev;
    const granted = Object.fromEntries(functionsOf(infra).map((fn) => [functionName(fn), linkNames(fn).sort()]));
    expect(granted).toEqual(Object.fromEntries(Object.entries(needs).map(([fn, links]) => [fn, [...links].sort()])));
  });

  it("links name resources infra declares, of the kinds the functions read", () => {
    const kinds = Object.fromEntries(production.components.map((c) => [c.logicalName, c.kind]));
    expect(kinds).toMatchObject({
      Table: "sst.aws.Dynamo",
      Email: "sst.aws.Email",
      EmailFeedback: "sst.aws.SnsTopic",
      Api: "sst.aws.ApiGatewayV2",
      PublicUrl: "sst.sst.Linkable",
      StripeSecretKey: "sst.sst.Secret",
      StripeWebhookSecret: "sst.sst.Secret",
      StorecoveApiKey: "sst.sst.Secret",
      CardPayments: "sst.sst.Linkable",
      Bus: "sst.aws.Bus",
    });
  });

  it("the CardPayments flag says whether the key is set, and carries nothing of it", () => {
    const flag = componentsOf(production, "sst.sst.Linkable").find((c) => c.logicalName === "CardPayments")!;
    // The placeholder "" (no key): off. The property is a boolean, never the key's text.
    expect(flag.link!.properties).toEqual({ enabled: false });
  });

  it("… and with the key set (sst secret set StripeSecretKey), the flag is on, still without the key", async () => {
    const key = "sk_live_not_a_real_key_0123456789";
    const withKey = await evaluateInfra({ stage: "production", env: sender, secrets: { StripeSecretKey: key } });
    const flag = componentsOf(withKey, "sst.sst.Linkable").find((c) => c.logicalName === "CardPayments")!;
    expect(flag.link!.properties).toEqual({ enabled: true });
    // The key itself is linked only where it is used (the Payments function), never through the flag.
    expect(JSON.stringify(flag.link)).not.toContain(key);
  });

  it("the card processor's secrets default to empty (no card payments), never to a value in the repo", () => {
    for (const secret of componentsOf(production, "sst.sst.Secret"))
      expect(secret.args.placeholder, secret.logicalName).toBe("");
  });
});

describe("the API", () => {
  const api = only(production, "sst.aws.ApiGatewayV2");

  it("routes everything to the app ($default) but documents, public pages, the API's description, card payments", () => {
    // The paths come from the route modules (app/function-paths.ts), in their order.
    const documentPaths = pathsOf(documentRouteModules);
    const paymentPaths = pathsOf(paymentRouteModules);
    expect(documentPaths).toContain("/public/invoices/{token}/pdf");
    expect(paymentPaths).toContain("/webhooks/card-processor");
    expect(documentPaths).toContain("/public/credit-notes/{token}/pdf");
    expect(api.routes!.map((r) => r.rawRoute)).toEqual([
      "$default",
      ...[...documentPaths, ...paymentPaths].map((p) => `ANY ${p}`),
    ]);
    const routed = functionsOf(production).filter((fn) => fn.trigger.kind === "api");
    expect(routed.map((fn) => [fn.id, fn.handler, fn.trigger])).toEqual([
      ["Api $default", "packages/functions/src/lambda/api.handler", { kind: "api", api: "Api", routes: ["$default"] }],
      [
        "Documents",
        "packages/functions/src/lambda/documents.handler",
        { kind: "api", api: "Api", routes: documentPaths.map((p) => `ANY ${p}`) },
      ],
      [
        "Payments",
        "packages/functions/src/lambda/payments.handler",
        { kind: "api", api: "Api", routes: paymentPaths.map((p) => `ANY ${p}`) },
      ],
    ]);
    // Routed by ARN: SST then points each route at that one Lambda instead of creating one per route.
    const shared = componentsOf(production, "sst.aws.Function");
    expect(shared.map((fn) => fn.logicalName)).toEqual(["Documents", "Payments"]);
    for (const route of api.routes!.slice(1)) expect(shared.map((fn) => fn.arn)).toContain(route.handler);
  });

  it("allows cross-origin calls with the headers the contract reads, and exposes the ones it sets", () => {
    const cors = api.args.cors as {
      allowOrigins: string[];
      allowHeaders: string[];
      exposeHeaders: string[];
      allowMethods: string[];
    };
    expect(cors.allowOrigins).toEqual(["*"]);
    expect(cors.allowMethods).toEqual(["*"]);
    expect(cors.allowHeaders).toEqual(
      expect.arrayContaining(["authorization", "content-type", "idempotency-key", "if-match"]),
    );
    expect(cors.exposeHeaders).toEqual(
      expect.arrayContaining(["etag", "location", "link", "idempotent-replayed", "x-request-id"]),
    );
  });

  it("keeps access logs: two weeks, a year in production", () => {
    expect(api.args.accessLog).toEqual({ retention: "1 year" });
    expect(only(dev, "sst.aws.ApiGatewayV2").args.accessLog).toEqual({ retention: "2 weeks" });
  });

  it("logs the route key, status, latency and request id, never the raw path (a public token)", () => {
    // The stage args as SST's ApiGatewayV2 builds them (createStage), default format included.
    const stageArgs = {
      apiId: "abc123defg",
      autoDeploy: true,
      name: "$default",
      accessLogSettings: {
        destinationArn: "arn:aws:logs:us-east-1:123456789012:log-group:/aws/vendedlogs/apis/invoicing-dev-Api",
        format: JSON.stringify({
          requestId: `"$context.requestId"`,
          path: `"$context.path"`,
          status: "$context.status",
        }),
      },
    };
    const transform = (api.args.transform as { stage: typeof apiStage }).stage;
    // The recorded transform is infra's own (from the evaluated sst.config.ts bundle).
    expect(transform.name).toBe("apiStage");
    transform(stageArgs, {});
    expect(stageArgs.accessLogSettings.destinationArn).toMatch(/log-group:\/aws\/vendedlogs\/apis\//);
    const format = stageArgs.accessLogSettings.format;
    expect(JSON.parse(format)).toEqual(accessLogFormat);
    const variables = [...format.matchAll(/\$context\.([A-Za-z.]+)/g)].map((m) => m[1]).sort();
    expect(variables).toEqual(
      expect.arrayContaining(["requestId", "routeKey", "status", "responseLatency", "integration.requestId"]),
    );
    // Only variables that cannot hold a path, query, token or personal data.
    const allowed = [
      "requestId",
      "requestTime",
      "httpMethod",
      "routeKey",
      "status",
      "responseLatency",
      "integration.requestId",
      "integration.status",
      "integration.latency",
      "integrationErrorMessage",
    ];
    for (const variable of variables) expect(allowed, variable).toContain(variable);
    expect(format).not.toMatch(/\$context\.(path|identity|domainName|authorizer)/);
  });

  // Issue 29, finding 4: anonymous traffic to the public routes is capped by API Gateway.
  it("throttles every public route, the pay link hardest, after the routes exist", async () => {
    const stageArgs: { accessLogSettings: object; routeSettings?: unknown } = {
      accessLogSettings: { destinationArn: "arn:aws:logs:x", format: "{}" },
    };
    const opts: { dependsOn?: unknown } = {};
    (api.args.transform as { stage: typeof apiStage }).stage(stageArgs, opts);
    const settings = (await stageArgs.routeSettings) as {
      routeKey: string;
      throttlingRateLimit: number;
      throttlingBurstLimit: number;
    }[];
    const routes = api.routes!.map((r) => r.rawRoute);
    const publicRoutes = routes.filter((key) => key.startsWith("ANY /public/"));
    // Every /public/ path the route modules serve (app/function-paths.ts), and nothing else.
    expect(publicRoutes).toEqual(
      [...pathsOf(documentRouteModules), ...pathsOf(paymentRouteModules)]
        .filter((path) => path.startsWith("/public/"))
        .map((path) => `ANY ${path}`),
    );
    // Every public route the API has, and only those.
    expect(settings.map((s) => s.routeKey).sort()).toEqual([...publicRoutes].sort());
    const limit = (key: string) => {
      const s = settings.find((x) => x.routeKey === key)!;
      return [s.throttlingRateLimit, s.throttlingBurstLimit];
    };
    // Stage-wide ceilings, far above one token's limit (PUBLIC_RATE_LIMIT, per token in the app).
    expect(limit("ANY /public/invoices/{token}/pay")).toEqual([50, 100]);
    expect(limit("ANY /public/invoices/{token}/pdf")).toEqual([200, 400]);
    expect(limit("ANY /public/invoices/{token}")).toEqual([500, 1000]);
    for (const s of settings) {
      expect(s.throttlingRateLimit, s.routeKey).toBeGreaterThanOrEqual(10);
      expect(s.throttlingBurstLimit, s.routeKey).toBe(2 * s.throttlingRateLimit);
    }
    // The stage waits for the routes its settings name (API Gateway refuses unknown route keys):
    // its dependencies are the API's route components, every one of them.
    const waitedFor = (await (opts.dependsOn as Promise<{ kind: string; logicalName: string }[]>)).map(
      (c) => `${c.kind} ${c.logicalName}`,
    );
    expect(waitedFor.sort()).toEqual(
      routes.map((key) => `sst.aws.ApiGatewayV2LambdaRoute ${api.logicalName} ${key}`).sort(),
    );
  });

  it("a stage whose settings SST stopped passing as a plain object refuses to deploy rather than log paths", () => {
    expect(() => withAccessLogFormat({ accessLogSettings: undefined })).toThrow(/access-log/);
  });
});

describe("email: one SES identity per sender, owned by one stage", () => {
  const emailOf = (infra: typeof dev) => only(infra, "sst.aws.Email");

  it("by default the stage owns the identity: it creates it (SST's Email component) with the sender", () => {
    expect(emailOf(dev).args).toEqual({ sender: "billing@example.com" });
  });

  it("EMAIL_IDENTITY=shared references the identity another stage owns (sst.aws.Email.get), creating none", async () => {
    const shared = await evaluateInfra({ stage: "alice", env: { ...sender, EMAIL_IDENTITY: "shared" } });
    expect(emailOf(shared).args).toEqual({ ref: true, sender: "billing@example.com" });
  });

  it("production owns its identity: shared is refused; a wrong value is refused", async () => {
    await expect(evaluateInfra({ stage: "production", env: { ...sender, EMAIL_IDENTITY: "shared" } })).rejects.toThrow(
      /EMAIL_IDENTITY=shared differs from production's identity "own"/,
    );
    await expect(evaluateInfra({ stage: "alice", env: { ...sender, EMAIL_IDENTITY: "borrowed" } })).rejects.toThrow(
      /EMAIL_IDENTITY must be one of own, shared/,
    );
    await expect(evaluateInfra({ stage: "alice", env: { EMAIL_SENDER: "billing at example" } })).rejects.toThrow(
      /neither an email address nor a domain/,
    );
  });

  it("a domain on Route 53 gets its records from SST; no records are printed", async () => {
    const domain = await evaluateInfra({
      stage: "alice",
      env: { EMAIL_SENDER: "mail.example.com", EMAIL_IDENTITY: "own" },
    });
    expect(emailOf(domain).args).toEqual({ sender: "mail.example.com" });
    expect(domain.outputs.emailDnsRecords).toBeUndefined();
  });

  it("EMAIL_DNS=manual: an identity that does not wait for verification; DKIM tokens and records are outputs", async () => {
    const manual = await evaluateInfra({
      stage: "alice",
      env: { EMAIL_SENDER: "mail.example.com", EMAIL_DNS: "manual", EMAIL_IDENTITY: "own" },
    });
    // Not SST's Email, which always adds a ses.DomainIdentityVerification that blocks the deploy until
    // DNS verifies: a plain SES identity (retained in production), linked as "Email" all the same.
    expect(componentsOf(manual, "sst.aws.Email")).toEqual([]);
    const identity = only(manual, "aws.sesv2.EmailIdentity");
    expect(identity.args.emailIdentity).toBe("mail.example.com");
    expect(identity.opts.retainOnDelete).toBe(false);
    const linked = componentsOf(manual, "sst.sst.Linkable").find((c) => c.logicalName === "Email")!;
    expect(linked.link!.properties).toEqual({ sender: "mail.example.com", configSet: "invoicing-alice-email" });
    const emailing = functionsOf(manual).find((fn) => linkNames(fn).includes("Email"))!;
    expect(linkPermissions(emailing).find((p) => p.actions.includes("ses:SendEmail"))).toEqual({
      actions: ["ses:SendEmail", "ses:SendRawEmail"],
      resources: [
        "arn:aws:ses:us-east-1:123456789012:identity/*",
        "arn:aws:ses:us-east-1:123456789012:configuration-set/invoicing-alice-email",
      ],
      conditions: [{ test: "StringLike", variable: "ses:FromAddress", values: ["*@mail.example.com"] }],
    });
    // The recorder's DKIM tokens stand in for the three SES issues.
    expect(manual.outputs.emailDkimTokens).toEqual(["dkimtoken1", "dkimtoken2", "dkimtoken3"]);
    expect(manual.outputs.emailDnsRecords).toEqual([
      "CNAME dkimtoken1._domainkey.mail.example.com dkimtoken1.dkim.amazonses.com",
      "CNAME dkimtoken2._domainkey.mail.example.com dkimtoken2.dkim.amazonses.com",
      "CNAME dkimtoken3._domainkey.mail.example.com dkimtoken3.dkim.amazonses.com",
      'TXT _dmarc.mail.example.com "v=DMARC1; p=none;"',
    ]);
    await expect(evaluateInfra({ stage: "alice", env: { ...sender, EMAIL_DNS: "manual" } })).rejects.toThrow(
      /EMAIL_DNS=manual is for a domain sender/,
    );
  });

  it.each(["dev", "production"])(
    "in %s, emails are sent with the stage's own configuration set, whose bounces and complaints go to the feedback topic",
    (stage) => {
      const infra = stage === "production" ? production : dev;
      const set = only(infra, "aws.sesv2.ConfigurationSet");
      expect(set.args.configurationSetName).toBe(`invoicing-${stage}-email`);
      // The Email links this set as configSet: what the SES transport names on every SendEmail.
      expect(emailOf(infra).link!.properties.configSet).toBe(`invoicing-${stage}-email`);
      const destination = only(infra, "aws.sesv2.ConfigurationSetEventDestination");
      expect(String((destination.args.configurationSetName as { value: string }).value)).toBe(
        `invoicing-${stage}-email`,
      );
      const event = destination.args.eventDestination as {
        enabled: boolean;
        matchingEventTypes: string[];
        snsDestination: { topicArn: { value: string } };
      };
      expect(event.enabled).toBe(true);
      expect(event.matchingEventTypes).toEqual(expect.arrayContaining(["BOUNCE", "COMPLAINT"]));
      const topic = componentsOf(infra, "sst.aws.SnsTopic").find((c) => c.logicalName === "EmailFeedback")!;
      expect(event.snsDestination.topicArn.value).toBe(topic.link!.properties.arn);
      const [subscriber] = functionsOf(infra).filter((fn) => fn.trigger.kind === "sns");
      expect(subscriber).toMatchObject({
        handler: "packages/functions/src/lambda/email-feedback.handler",
        trigger: { topic: "EmailFeedback" },
      });
    },
  );
});

describe("IAM: the statements each function's role gets from its links", () => {
  const identities = "arn:aws:ses:us-east-1:123456789012:identity/*";

  it.each(["dev", "production"])(
    "in %s: item-level DynamoDB on this stage's table only; SES SendEmail only, from the sender only",
    (stage) => {
      const infra = stage === "production" ? production : dev;
      const table = only(infra, "sst.aws.Dynamo").name!;
      const tableArn = `arn:aws:dynamodb:us-east-1:123456789012:table/${table}`;
      const bus = componentsOf(infra, "sst.aws.Bus")[0];
      let emailing = 0;
      for (const fn of functionsOf(infra)) {
        const statements = linkPermissions(fn);
        const links = linkNames(fn);
        if (links.includes("Email")) emailing++;
        expect(statements, fn.id).toEqual([
          {
            actions: [
              "dynamodb:GetItem",
              "dynamodb:BatchGetItem",
              "dynamodb:Query",
              "dynamodb:PutItem",
              "dynamodb:UpdateItem",
              "dynamodb:DeleteItem",
              "dynamodb:ConditionCheckItem",
            ],
            resources: [tableArn, `${tableArn}/index/*`],
          },
          ...(links.includes("Email")
            ? [
                {
                  actions: ["ses:SendEmail", "ses:SendRawEmail"],
                  resources: [
                    identities,
                    `arn:aws:ses:us-east-1:123456789012:configuration-set/invoicing-${stage}-email`,
                  ],
                  conditions: [{ test: "StringLike", variable: "ses:FromAddress", values: ["billing@example.com"] }],
                },
              ]
            : []),
          // The bus: PutEvents on this stage's bus only (SST's default, events:*, replaced).
          ...(links.includes("Bus")
            ? [{ actions: ["events:PutEvents"], resources: [(bus!.link!.properties as { arn: string }).arn] }]
            : []),
          // A work queue: SendMessage on that queue only (SST's default, sqs:*, replaced).
          ...fn.link
            .filter((resource) => resource.kind === "sst.aws.Queue")
            .map((queue) => ({
              actions: ["sqs:SendMessage"],
              resources: [`arn:aws:sqs:us-east-1:123456789012:invoicing-${stage}-${queue.logicalName}Queue`],
            })),
        ]);
        // Nothing anywhere on "*", and no ses:* (SST's default for a linked Email grants both).
        for (const statement of statements) {
          expect(statement.resources, fn.id).not.toContain("*");
          expect(statement.actions, fn.id).not.toContain("ses:*");
        }
      }
      expect(emailing).toBeGreaterThan(0);
    },
  );

  it("a domain sender may send from any of its addresses, and nothing else", async () => {
    const domain = await evaluateInfra({ stage: "alice", env: { EMAIL_SENDER: "mail.example.com" } });
    const sender = functionsOf(domain).find((fn) => linkNames(fn).includes("Email"))!;
    const ses = linkPermissions(sender).find((s) => s.actions.includes("ses:SendEmail"));
    expect(ses?.conditions).toEqual([
      { test: "StringLike", variable: "ses:FromAddress", values: ["*@mail.example.com"] },
    ]);
  });

  /**
   * The recorder's idea of SST's links must be SST's: read from the platform code `sst install`
   * writes (npm run typecheck). Under CI it must be there; elsewhere the check says it was skipped.
   */
  const platform = join(root, ".sst", "platform", "src", "components");
  const havePlatform = existsSync(platform);
  if (!havePlatform && !IN_CI)
    skipNotice("the check against SST's platform code (infra.test.ts)", `no ${platform}: run npm run typecheck once`);
  it.skipIf(!havePlatform && !IN_CI)(
    "matches SST 4.17.1's platform code: Dynamo's and Email's default grants, Linkable.wrap replacing them, the default log format",
    () => {
      const source = (file: string) => readFileSync(join(platform, file), "utf8");
      const linkOf = (file: string) => {
        const code = source(file);
        const start = code.indexOf("public getSSTLink()");
        expect(start, file).toBeGreaterThan(0);
        return code.slice(start, code.indexOf("\n  }\n", start)).replace(/\s+/g, " ");
      };
      // Dynamo: dynamodb:* on the table and its indexes, as the recorder grants.
      expect(linkOf("aws/dynamo.ts")).toContain(
        // biome-ignore lint/suspicious/noTemplateCurlyInString: SST's source text, matched as written
        'actions: ["dynamodb:*"], resources: [this.arn, interpolate`${this.arn}/*`]',
      );
      // Bus: events:* on the bus, as the recorder grants.
      expect(linkOf("aws/bus.ts")).toContain('actions: ["events:*"], resources: [this.nodes.bus.arn]');
      // Email: what the wrap in infra/email.ts replaces.
      const email = linkOf("aws/email.ts");
      expect(email).toContain('actions: ["ses:*"], resources: [this.identity.arn, this.configurationSet.arn]');
      expect(email).toContain('resources: ["*"]');
      // Linkable.wrap replaces the class's getSSTLink, for every instance.
      expect(source("linkable.ts").replace(/\s+/g, " ")).toContain(
        "cls.prototype.getSSTLink = function () { return cb(this); };",
      );
      // Email.get references the identity and its own (default) configuration set.
      expect(source("aws/email.ts")).toContain("sesv2.EmailIdentity.get(");
      // The stage SST builds: format in a plain accessLogSettings object, logging the path by default.
      const api = source("aws/apigatewayv2.ts");
      expect(api).toMatch(/accessLogSettings: \{\s*destinationArn: logGroup\.arn,\s*format: JSON\.stringify\(/);
      expect(api).toContain('path: `"$context.path"`');
    },
  );
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

  it("has a row per function whose links, timeout and memory are infra's", () => {
    const header = "| Function (physical name `invoicing-<stage>-…`) | Links |";
    // The table's rows: from the header (less it and its rule) to the first line that is not a row.
    const lines = docs.slice(docs.indexOf(header)).split("\n").slice(2);
    const rows = lines.slice(
      0,
      lines.findIndex((line) => !line.startsWith("| ")),
    );
    const cells = (row: string) => row.split(" | ").map((c) => c.replace(/^\| |\s*\|$/g, ""));
    const ticked = (cell: string) => [...cell.replace(/\([^)]*\)/g, "").matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    /** "25 s (…)", "5 min" → seconds. */
    const documentedSeconds = (cell: string) => {
      const match = /^(\d+) (s|min)\b/.exec(cell)!;
      return Number(match[1]) * (match[2] === "min" ? 60 : 1);
    };
    const documented = Object.fromEntries(
      rows.map((row) => {
        const [name, links, , timeout, memory] = cells(row);
        return [
          ticked(name!)[0],
          { links: ticked(links!).sort(), timeout: documentedSeconds(timeout!), memory: megabytes(memory) },
        ];
      }),
    );
    const declared = Object.fromEntries(
      functionsOf(production).map((fn) => [
        String(fn.name).replace(/^invoicing-production-/, ""),
        { links: linkNames(fn).sort(), timeout: seconds(fn.timeout), memory: megabytes(fn.memory) },
      ]),
    );
    expect(Object.keys(declared).length).toBeGreaterThan(10);
    expect(documented).toEqual(declared);
  });

  it("says how each email setting is given, and how a stage shares an identity", () => {
    for (const text of [
      "EMAIL_SENDER",
      "EMAIL_IDENTITY=shared",
      "EMAIL_DNS=manual",
      "infra/stages.ts",
      "emailDnsRecords",
    ]) {
      expect(docs).toContain(text);
    }
  });

  it("shows the deploy and secret commands for the names infra uses", () => {
    expect(docs).toContain("npx sst deploy --stage production");
    for (const secret of componentsOf(production, "sst.sst.Secret"))
      expect(docs).toContain(`npx sst secret set ${secret.logicalName} `);
  });
});
