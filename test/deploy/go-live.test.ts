import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { emailSettings } from "../../infra/email-settings";
import { STAGES, type StageSettings, stageSettings } from "../../infra/stages";
import { componentsOf, evaluateInfra, functionsOf, linkNames, rolePermissions, root } from "../../scripts/infra.mjs";

/**
 * Issue 39, from the synthesized infra (scripts/infra.mjs) and the stage settings (infra/stages.ts):
 * a production that pages someone, lives in one region and account, and outlives its API's URL.
 */
const production = await evaluateInfra({ stage: "production", env: {} });
const dev = await evaluateInfra({ stage: "dev", env: {} });
const alice = await evaluateInfra({ stage: "alice", env: {} });
type Infra = typeof production;

const named = (infra: Infra, kind: string, logicalName: string) => {
  const found = componentsOf(infra, kind).filter((c) => c.logicalName === logicalName);
  expect(found, `${kind} ${logicalName}`).toHaveLength(1);
  return found[0]!;
};
/** Outputs as plain values. */
const plain = <T>(value: unknown): T =>
  JSON.parse(JSON.stringify(value, (_k, v) => (v && typeof v === "object" && "value" in v ? v.value : v)));
const alarmsOf = (infra: Infra) =>
  Object.fromEntries(
    componentsOf(infra, "aws.cloudwatch.MetricAlarm").map((c) => [
      c.logicalName,
      plain<Record<string, unknown>>(c.args),
    ]),
  );
/** A copy of the stage map with production changed. */
const withProduction = (change: Partial<StageSettings>) => ({
  dev: STAGES.dev,
  production: { ...STAGES.production, ...change } as StageSettings,
});

describe("item 1: settings in code; production pages someone", () => {
  it("production refuses to deploy without an alarm target", () => {
    expect(() => stageSettings("production", withProduction({ alarms: false }))).toThrow(
      /production refuses to deploy without an alarm target/,
    );
    expect(() =>
      stageSettings("production", withProduction({ alarms: { page: { emails: [] }, warn: { emails: [] } } })),
    ).toThrow(/without an alarm target/);
    // A pager's HTTPS endpoint alone is a target.
    const pager = { page: { emails: [], https: ["https://events.pagerduty.example/integration/abc/enqueue"] } };
    expect(stageSettings("production", withProduction({ alarms: { ...pager, warn: { emails: [] } } })).alarms).toEqual({
      ...pager,
      warn: { emails: [] },
    });
    expect(() =>
      stageSettings(
        "production",
        withProduction({ alarms: { page: { emails: [], https: ["http://x"] }, warn: { emails: [] } } }),
      ),
    ).toThrow(/must be https/);
  });

  it("production's deploy itself refuses without an alarm target (sst.config.ts's app() checks the map)", async () => {
    await expect(
      evaluateInfra({
        stage: "production",
        stages: { production: { ...STAGES.production, alarms: { page: { emails: [] }, warn: { emails: [] } } } },
      }),
    ).rejects.toThrow(/production refuses to deploy without an alarm target/);
  });

  it("every target of the map is subscribed to the Alarms topic: emails, a pager's HTTPS endpoint", async () => {
    const pager = "https://events.pagerduty.example/integration/abc/enqueue";
    const infra = await evaluateInfra({
      stage: "production",
      stages: {
        production: {
          ...STAGES.production,
          alarms: { page: { emails: ["oncall@example.com"], https: [pager] }, warn: { emails: ["ops@example.com"] } },
        },
      },
    });
    const arnOf = (name: string) =>
      plain<string>((named(infra, "sst.aws.SnsTopic", name) as unknown as { arn: unknown }).arn);
    const subscriptions = componentsOf(infra, "aws.sns.TopicSubscription").map((c) => ({
      name: c.logicalName,
      ...plain<Record<string, unknown>>(c.args),
    }));
    expect(subscriptions).toEqual([
      { name: "AlarmsEmail1", topic: arnOf("Alarms"), protocol: "email", endpoint: "oncall@example.com" },
      { name: "AlarmsPager1", topic: arnOf("Alarms"), protocol: "https", endpoint: pager },
      { name: "WarningsEmail1", topic: arnOf("Warnings"), protocol: "email", endpoint: "ops@example.com" },
    ]);
  });

  it("AWS Chatbot: a Slack and a Teams channel get a configuration subscribed to the Alarms topic, with a read-only role", async () => {
    const slack = { workspaceId: "T07EA123LEP", channelId: "C07EZ1ABC23" };
    const teams = {
      tenantId: "6b8e3f2a-1c4d-4e5f-8a9b-0c1d2e3f4a5b",
      teamId: "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0",
      channelId: "19:e6d6f8d2a4f24fd9b3b11d4b8d0cd8b0@thread.tacv2",
    };
    // A chat channel alone is a target: production deploys with it and nothing else.
    const infra = await evaluateInfra({
      stage: "production",
      stages: {
        production: {
          ...STAGES.production,
          alarms: { page: { emails: [], chat: [{ slack }, { teams }] }, warn: { emails: [] } },
        },
      },
    });
    const alarmsArn = plain<string>((named(infra, "sst.aws.SnsTopic", "Alarms") as unknown as { arn: unknown }).arn);
    const role = named(infra, "aws.iam.Role", "AlarmsChatbotRole") as unknown as {
      arn: unknown;
      name: unknown;
      args: unknown;
    };
    const roleArn = plain<string>(role.arn);
    const common = {
      iamRoleArn: roleArn,
      snsTopicArns: [alarmsArn],
      guardrailPolicyArns: ["arn:aws:iam::aws:policy/CloudWatchReadOnlyAccess"],
      loggingLevel: "ERROR",
    };
    expect(plain(named(infra, "aws.chatbot.SlackChannelConfiguration", "AlarmsSlack1").args)).toEqual({
      ...common,
      configurationName: "invoicing-production-alarms-1",
      slackTeamId: slack.workspaceId,
      slackChannelId: slack.channelId,
    });
    expect(plain(named(infra, "aws.chatbot.TeamsChannelConfiguration", "AlarmsTeams2").args)).toEqual({
      ...common,
      configurationName: "invoicing-production-alarms-2",
      tenantId: teams.tenantId,
      teamId: teams.teamId,
      channelId: teams.channelId,
    });
    // Chatbot may assume the role, and the role may only read CloudWatch: no wildcard action.
    const trust = JSON.parse(plain<{ assumeRolePolicy: string }>(role.args).assumeRolePolicy);
    expect(trust.Statement).toEqual([
      { Effect: "Allow", Principal: { Service: "chatbot.amazonaws.com" }, Action: "sts:AssumeRole" },
    ]);
    const policy = plain<{ role: string; policy: string }>(
      named(infra, "aws.iam.RolePolicy", "AlarmsChatbotPolicy").args,
    );
    expect(policy.role).toBe(plain(role.name));
    const statements = JSON.parse(policy.policy).Statement as { Action: string[] }[];
    const actions = statements.flatMap((st) => st.Action);
    expect(actions.length).toBeGreaterThan(0);
    for (const action of actions) expect(action).toMatch(/^cloudwatch:(Describe|Get|List)[A-Za-z]+$/);
    // No email subscription on the Alarms topic: the chat channels are its only target.
    expect(componentsOf(infra, "aws.sns.TopicSubscription").filter((c) => c.logicalName.startsWith("Alarms"))).toEqual(
      [],
    );
    // The repository's map has no chat channel: no Chatbot resources, no role.
    expect(componentsOf(production, "aws.chatbot.SlackChannelConfiguration")).toEqual([]);
    expect(componentsOf(production, "aws.iam.Role")).toEqual([]);
  });

  it("a chat channel's ids are checked before AWS sees them", () => {
    const withChat = (chat: unknown) =>
      withProduction({ alarms: { page: { emails: [], chat: chat as never }, warn: { emails: [] } } });
    expect(() =>
      stageSettings("production", withChat([{ slack: { workspaceId: "acme", channelId: "#ops" } }])),
    ).toThrow(/Slack channel is .*ids, not names/);
    expect(() =>
      stageSettings("production", withChat([{ teams: { tenantId: "x", teamId: "y", channelId: "General" } }])),
    ).toThrow(/Teams channel is/);
  });

  it("dev and production are both named, personal stages get dev's account and no alarms", () => {
    expect(stageSettings("alice")).toMatchObject({ account: STAGES.dev.account, alarms: false });
    expect(stageSettings("alice").domain).toBeUndefined();
    expect(stageSettings("alice").email.identity).toBe("shared");
  });
});

describe("item 2: region and account pinned per stage", () => {
  it("the AWS provider has the stage's region, profile and only its account", () => {
    // Under CI (process.env.CI, as .ci/run sets it) the credentials come from the environment, so
    // sst.config.ts names no profile there.
    const profile = (name: string) => (process.env.CI ? {} : { profile: name });
    expect(production.app.providers).toEqual({
      aws: { region: "us-east-1", ...profile("invoicing-production"), allowedAccountIds: [STAGES.production.account] },
    });
    expect(dev.app.providers).toEqual({
      aws: { region: "us-east-1", ...profile("invoicing-dev"), allowedAccountIds: [STAGES.dev.account] },
    });
    expect(alice.app.providers).toEqual(dev.app.providers);
  });

  it("dev and production live in different accounts (their own concurrency, SES reputation, API throttle)", () => {
    expect(STAGES.dev.account).not.toBe(STAGES.production.account);
    expect(STAGES.dev.profile).not.toBe(STAGES.production.profile);
  });

  it("a malformed account or region is refused", () => {
    expect(() => stageSettings("production", withProduction({ account: "1234" }))).toThrow(/12-digit/);
    expect(() => stageSettings("production", withProduction({ region: "Frankfurt" }))).toThrow(/not an AWS region/);
  });
});

describe("item 3: a domain per stage, and every public link through it", () => {
  it("the API has the stage's domain; the public base URL is the domain, as a constant", () => {
    const api = named(production, "sst.aws.ApiGatewayV2", "Api");
    expect(api.args.domain).toEqual({ name: "api.example.com", dns: { provider: "aws" } });
    const publicUrl = named(production, "sst.sst.Linkable", "PublicUrl");
    expect(publicUrl.link!.properties).toEqual({ url: "https://api.example.com" });
    // A plain string: not the API's url output, which with a domain waits for the stage (a cycle).
    expect(typeof publicUrl.args.properties.url).toBe("string");
    expect(named(dev, "sst.sst.Linkable", "PublicUrl").link!.properties).toEqual({
      url: "https://api.dev.example.com",
    });
  });

  it("every function that makes links links the public base URL, none the API's own URL", () => {
    for (const fn of functionsOf(production)) expect(linkNames(fn), fn.id).not.toContain("Api");
    const linking = functionsOf(production).filter((fn) => linkNames(fn).includes("PublicUrl"));
    expect(linking.map((fn) => fn.id).sort()).toEqual(
      // Since issue 37 the queue workers make the recurring, reminder and outbox emails' links.
      [
        "Api $default",
        "Documents",
        "Payments",
        "RecurringQueueSubscriber",
        "RemindersQueueSubscriber",
        "OutboxQueueSubscriber",
      ].sort(),
    );
  });

  it("a personal stage has no domain: its links use API Gateway's URL", () => {
    expect(named(alice, "sst.aws.ApiGatewayV2", "Api").args.domain).toBeUndefined();
    expect(named(alice, "sst.sst.Linkable", "PublicUrl").link!.properties).toEqual({ url: "https://api.invalid" });
  });

  it("a domain whose DNS is elsewhere uses the named certificate and prints the CNAME target", async () => {
    const cert = "arn:aws:acm:us-east-1:111111111111:certificate/0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0";
    const infra = await evaluateInfra({
      stage: "production",
      stages: { production: { ...STAGES.production, domain: { name: "api.example.org", dns: { cert } } } },
    });
    // The API's domain: no Route 53 records, the certificate named; links and the webhook through it.
    expect(named(infra, "sst.aws.ApiGatewayV2", "Api").args.domain).toEqual({
      name: "api.example.org",
      dns: false,
      cert,
    });
    expect(named(infra, "sst.sst.Linkable", "PublicUrl").link!.properties).toEqual({ url: "https://api.example.org" });
    expect(infra.outputs).toMatchObject({
      url: "https://api.example.org",
      apiDomainTarget: expect.stringMatching(/^d-\w+\.execute-api\.us-east-1\.amazonaws\.com$/),
    });
    // On Route 53 there is nothing to point by hand.
    expect(production.outputs.apiDomainTarget).toBeUndefined();
    // A certificate of another region, or not an ACM ARN, stops the deploy (API Gateway would refuse it midway).
    for (const wrong of ["arn:aws:acm:eu-west-1:111111111111:certificate/abc", "api.example.org"])
      expect(() =>
        stageSettings("production", withProduction({ domain: { name: "api.example.org", dns: { cert: wrong } } })),
      ).toThrow(/ACM certificate in us-east-1/);
    expect(() => stageSettings("production", withProduction({ domain: undefined }))).toThrow(/needs its own domain/);
  });
});

describe("item 5: a restore's pause is a setting, not a hand edit", () => {
  /** The stream subscriber's event source mapping, after infra's transform. */
  const mappingOf = (infra: Infra) => {
    const fn = functionsOf(infra).find((f) => f.trigger.kind === "stream")!;
    if (fn.trigger.kind !== "stream") throw new Error("no stream subscriber");
    const args: Record<string, unknown> = {};
    fn.trigger.transform!.eventSourceMapping!(args);
    return args;
  };

  it("streamPaused: true disables the mapping (it keeps its place); without it the mapping runs", async () => {
    const paused = await evaluateInfra({
      stage: "production",
      stages: { production: { ...STAGES.production, streamPaused: true } },
    });
    expect(mappingOf(paused)).toMatchObject({ enabled: false, startingPosition: "TRIM_HORIZON" });
    expect(mappingOf(production)).toMatchObject({ enabled: true });
  });
});

describe("item 7: silent failures alarm", () => {
  const alarms = alarmsOf(production);

  it("every job that is not invoked in twice its interval alarms, missing data breaching", () => {
    const expected: Record<string, number> = {
      OverdueJob: 1800,
      RecurringJob: 1800,
      RemindersJob: 1800,
      ExpireEstimatesJob: 7200,
      WebhooksJob: 240,
      PeppolJob: 600,
    };
    for (const [job, period] of Object.entries(expected))
      expect(alarms[`${job}NotRunning`], job).toMatchObject({
        namespace: "AWS/Lambda",
        metricName: "Invocations",
        dimensions: { FunctionName: `invoicing-production-${job}` },
        statistic: "Sum",
        period,
        evaluationPeriods: 1,
        comparisonOperator: "LessThanThreshold",
        threshold: 1,
        treatMissingData: "breaching",
      });
    // The schedules themselves (docs/deploying.md lists them): twice the interval each.
    for (const cron of componentsOf(production, "sst.aws.CronV2")) {
      const [, n, unit] = /^rate\((\d+) (minute|hour)s?\)$/.exec(cron.args.schedule as string)!;
      expect(2 * Number(n) * (unit === "hour" ? 3600 : 60), cron.logicalName).toBe(expected[cron.logicalName]);
    }
    expect(alarms.SchedulerTargetErrors).toMatchObject({ namespace: "AWS/Scheduler", metricName: "TargetErrorCount" });
  });

  it("the SES feedback function (invoked asynchronously by SNS) has an on-failure queue, may send to it, and it alarms", () => {
    const config = plain<{ functionName: string; maximumRetryAttempts: number; destinationConfig: unknown }>(
      named(production, "aws.lambda.FunctionEventInvokeConfig", "EmailFeedbackOnFailure").args,
    );
    const queue = named(production, "sst.aws.Queue", "EmailFeedbackFailures") as unknown as { arn: { value: string } };
    expect(config).toEqual({
      functionName: "invoicing-production-EmailFeedback",
      maximumRetryAttempts: 2,
      destinationConfig: { onFailure: { destination: queue.arn.value } },
    });
    const feedback = functionsOf(production).find((fn) => fn.trigger.kind === "sns")!;
    expect(feedback.name).toBe("invoicing-production-EmailFeedback");
    expect(rolePermissions(feedback, production)).toContainEqual({
      actions: ["sqs:SendMessage"],
      resources: [queue.arn.value],
    });
    expect(alarms.EmailFeedbackFailuresNotEmpty).toMatchObject({
      namespace: "AWS/SQS",
      metricName: "ApproximateNumberOfMessagesVisible",
      dimensions: { QueueName: "invoicing-production-EmailFeedbackFailuresQueue" },
      threshold: 1,
    });
  });
});

describe("item 10: an apex sender on Route 53 is refused unless the operator opts in", () => {
  const apex = (createApexDmarc?: boolean) =>
    withProduction({ email: { sender: "example.com", identity: "own", dns: "route53", createApexDmarc } });

  it("refused by default, with what to do instead", () => {
    expect(() => emailSettings("production", {}, apex())).toThrow(/zone's apex.*createApexDmarc/);
    expect(() =>
      emailSettings(
        "production",
        {},
        withProduction({ email: { sender: "example.co.uk", identity: "own", dns: "route53" } }),
      ),
    ).toThrow(/apex/);
  });

  it("allowed with the opt-in, for a subdomain, or when the records are added by hand", () => {
    expect(emailSettings("production", {}, apex(true)).sender).toBe("example.com");
    expect(
      emailSettings(
        "production",
        {},
        withProduction({ email: { sender: "mail.example.com", identity: "own", dns: "route53" } }),
      ).sender,
    ).toBe("mail.example.com");
    expect(
      emailSettings(
        "production",
        {},
        withProduction({ email: { sender: "example.com", identity: "own", dns: "manual" } }),
      ).dns,
    ).toBe("manual");
  });
});

describe("item 11: every alarm names its runbook section, and the section exists", () => {
  const operations = readFileSync(join(root, "docs", "operations.md"), "utf8");
  /** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
  const anchors = new Set(
    [...operations.matchAll(/^#{2,4} (.+)$/gm)].map((m) =>
      m[1]!
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, "")
        .replace(/ /g, "-"),
    ),
  );

  it.each([
    ["production", production],
    ["dev", dev],
  ])("in %s", (_stage, infra) => {
    const alarms = alarmsOf(infra);
    expect(Object.keys(alarms).length).toBeGreaterThan(40);
    for (const [name, alarm] of Object.entries(alarms)) {
      const anchor = /Runbook: docs\/operations\.md#([a-z0-9-]+)$/.exec(String(alarm.alarmDescription))?.[1];
      expect(anchor, name).toBeDefined();
      expect(anchors.has(anchor!), `${name} → #${anchor}`).toBe(true);
    }
  });
});

describe("item 14: the Lambda log format is pinned to Text (the app's metrics are EMF lines by console.log)", () => {
  it.each([
    ["production", production],
    ["dev", dev],
    ["alice", alice],
  ])("in %s every function logs as Text", (_stage, infra) => {
    for (const fn of functionsOf(infra)) expect((fn.logging as { format?: string }).format, fn.id).toBe("text");
  });

  it("the metrics are written with console.log as EMF (what the Text format passes through)", () => {
    const metrics = readFileSync(join(root, "packages", "core", "src", "observability", "metrics.ts"), "utf8");
    expect(metrics).toContain("_aws");
    expect(metrics).toMatch(/console\.log\(/);
  });
});

describe("item 15: a dashboard and a monthly budget", () => {
  it("production has a dashboard of requests, errors, latency, queue ages, iterator age, emails, payments", () => {
    const dashboard = named(production, "aws.cloudwatch.Dashboard", "Dashboard");
    expect(dashboard.args.dashboardName).toBe("invoicing-production");
    const body = JSON.parse(plain<string>(dashboard.args.dashboardBody)) as {
      widgets: { properties: { title: string; metrics: unknown[][] } }[];
    };
    const metricNames = body.widgets.flatMap((w) => w.properties.metrics.map((m) => m[1]));
    for (const metric of [
      "Count",
      "5xx",
      "Latency",
      "Errors",
      "IteratorAge",
      "ApproximateAgeOfOldestMessage",
      "EmailsFailed",
      "Reputation.BounceRate",
      "Invocations",
    ])
      expect(metricNames, metric).toContain(metric);
    // Every metric names this stage's resources, never a placeholder left unresolved.
    expect(JSON.stringify(body)).not.toMatch(/\[object|undefined/);
  });

  it("each named stage has a monthly cost budget that emails at 80 % actual and 100 % forecast", () => {
    const budget = plain<Record<string, unknown>>(named(production, "aws.budgets.Budget", "MonthlyBudget").args);
    expect(budget).toMatchObject({
      budgetType: "COST",
      limitAmount: String(STAGES.production.budget!.monthlyUsd),
      limitUnit: "USD",
      timeUnit: "MONTHLY",
    });
    expect(budget.notifications).toEqual([
      expect.objectContaining({
        notificationType: "ACTUAL",
        threshold: 80,
        subscriberEmailAddresses: ["ops@example.com"],
      }),
      expect.objectContaining({ notificationType: "FORECASTED", threshold: 100 }),
    ]);
    expect(componentsOf(dev, "aws.budgets.Budget")).toHaveLength(1);
  });
});
