import { describe, expect, it } from "vitest";
import { METRIC, METRICS_NAMESPACE } from "@invoicing/core/observability/metric-names";
import { BATCH_SIZE, QUEUE_NAMES, QUEUE_RESOURCES, WORKER_CONCURRENCY } from "@invoicing/core/capabilities/queue-names";
import { componentsOf, evaluateInfra, functionsOf, rolePermissions, type InfraFunction } from "../../scripts/infra.mjs";

/**
 * Issue 30, from the synthesized infra (scripts/infra.mjs evaluates sst.config.ts offline): the stream
 * subscription's failure handling and its queue, least privilege on every role, the alarms, the
 * feedback topic's policy, what production retains, and the jobs' retries.
 */
const sender = { EMAIL_SENDER: "billing@example.com" };
const dev = await evaluateInfra({ stage: "dev", env: sender });
const production = await evaluateInfra({ stage: "production", env: sender });
type Infra = typeof dev;

const named = (infra: Infra, kind: string, logicalName: string) => {
  const found = componentsOf(infra, kind).filter((c) => c.logicalName === logicalName);
  expect(found, `${kind} ${logicalName}`).toHaveLength(1);
  return found[0]!;
};
const subscriberOf = (infra: Infra) => functionsOf(infra).find((fn) => fn.trigger.kind === "stream")!;
/** The event source mapping's args after infra's transform, starting from SST's own defaults. */
function mappingOf(infra: Infra): Record<string, unknown> {
  const fn = subscriberOf(infra);
  if (fn.trigger.kind !== "stream") throw new Error("not the stream subscriber");
  const args: Record<string, unknown> = { startingPosition: "LATEST" };
  fn.trigger.transform!.eventSourceMapping!(args);
  return JSON.parse(JSON.stringify(args, (_k, v) => (v && typeof v === "object" && "value" in v ? v.value : v)));
}
const seconds = (timeout: string | undefined) => {
  const [n, unit] = String(timeout).split(" ");
  return Number(n) * (unit!.startsWith("minute") ? 60 : 1);
};
const queueArn = (infra: Infra) =>
  (named(infra, "sst.aws.Queue", "StreamFailures") as unknown as { arn: { value: string } }).arn.value;

describe("the stream subscription: nothing lost, nothing stuck", () => {
  it.each(["dev", "production"])(
    "in %s: bounded retries, split batches, a record age bound, then the queue",
    (stage) => {
      const infra = stage === "production" ? production : dev;
      expect(mappingOf(infra)).toEqual({
        startingPosition: "TRIM_HORIZON",
        functionResponseTypes: ["ReportBatchItemFailures"],
        batchSize: 100,
        maximumBatchingWindowInSeconds: 1,
        maximumRetryAttempts: 5,
        bisectBatchOnFunctionError: true,
        maximumRecordAgeInSeconds: 3600,
        destinationConfig: { onFailure: { destinationArn: queueArn(infra) } },
        // Not paused (infra/stages.ts streamPaused, for a restore's copy-back).
        enabled: true,
        // Issue 37: a user's records stay in order at any factor (docs/events.md, "Ordering").
        parallelizationFactor: 10,
      });
    },
  );

  it("the failure queue keeps messages 14 days; the subscriber may send to it and nothing more", () => {
    const queue = named(production, "sst.aws.Queue", "StreamFailures");
    expect(queue.args.transform.queue).toEqual({ messageRetentionSeconds: 14 * 86_400 });
    const onFailureQueue = (fn: ReturnType<typeof functionsOf>[number]) =>
      rolePermissions(fn, production).filter((s) => s.resources.includes(queueArn(production)));
    expect(onFailureQueue(subscriberOf(production))).toEqual([
      { actions: ["sqs:SendMessage"], resources: [queueArn(production)] },
    ]);
    // No other function touches the queue (the work queues are infra/queues.ts's, checked below).
    for (const fn of functionsOf(production).filter((f) => f.trigger.kind !== "stream"))
      expect(onFailureQueue(fn), fn.id).toEqual([]);
  });

  it("is filtered to the records it acts on (core/src/stream/filter.ts)", async () => {
    const fn = subscriberOf(production);
    if (fn.trigger.kind !== "stream") throw new Error("not the stream subscriber");
    const { STREAM_FILTERS } = await import("@invoicing/core/stream/filter");
    expect(fn.trigger.filters).toEqual(STREAM_FILTERS);
    expect(fn.trigger.filters!.length).toBeLessThanOrEqual(5); // Lambda's default limit per mapping
  });
});

describe("least privilege: the synthesized permissions of every function", () => {
  it.each(["dev", "production"])(
    "in %s no statement has a wildcard action, or a table-level DynamoDB action",
    (stage) => {
      const infra = stage === "production" ? production : dev;
      const functions = functionsOf(infra);
      // 11 (with issue 40's PeppolJob), and the eight queue workers (issue 37's seven, and peppol).
      expect(functions.length).toBe(19);
      for (const fn of functions) {
        const actions = rolePermissions(fn, infra).flatMap((s) => s.actions);
        expect(actions.length, fn.id).toBeGreaterThan(0);
        for (const action of actions) {
          expect(action, fn.id).toMatch(/^[a-z0-9-]+:[A-Za-z]+$/); // no "*", no "Get*"
          expect(action, fn.id).not.toMatch(
            /^dynamodb:(UpdateTable|DeleteTable|CreateTable|Scan|Restore|Delete.*Backup)/,
          );
        }
        for (const statement of rolePermissions(fn, infra)) expect(statement.resources, fn.id).not.toContain("*");
      }
    },
  );

  it("the stream subscriber reads its table's stream (SST's grant) and puts events on the bus only", () => {
    const statements = rolePermissions(subscriberOf(production), production);
    const table = named(production, "sst.aws.Dynamo", "Table") as unknown as { streamArn: { value: string } };
    expect(statements).toContainEqual({
      actions: ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams"],
      resources: [table.streamArn.value],
    });
    expect(statements.filter((s) => s.actions.some((a) => a.startsWith("events:")))).toEqual([
      {
        actions: ["events:PutEvents"],
        resources: ["arn:aws:events:us-east-1:123456789012:event-bus/invoicing-production-BusBus"],
      },
    ]);
  });
});

describe("work queues (issue 37)", () => {
  const workers = (infra: Infra) => functionsOf(infra).filter((fn) => fn.trigger.kind === "queue");

  it.each(["dev", "production"])(
    "in %s each queue has a dead-letter queue, a worker with partial batch responses and bounded concurrency",
    (stage) => {
      const infra = stage === "production" ? production : dev;
      expect(
        workers(infra)
          .map((fn) => fn.trigger.kind === "queue" && fn.trigger.queue)
          .sort(),
      ).toEqual(QUEUE_NAMES.map((q) => QUEUE_RESOURCES[q]).sort());
      for (const queue of QUEUE_NAMES) {
        const logical = QUEUE_RESOURCES[queue];
        const main = named(infra, "sst.aws.Queue", logical);
        const dead = named(infra, "sst.aws.Queue", `${logical}Dead`) as unknown as { arn: { value: string } };
        const args = main.args as { dlq: { queue: { value: string }; retry: number }; visibilityTimeout: string };
        expect(args.dlq.queue.value ?? args.dlq.queue, queue).toBe(dead.arn.value);
        expect(args.dlq.retry, queue).toBe(5);
        const worker = workers(infra).find((fn) => fn.trigger.kind === "queue" && fn.trigger.queue === logical)!;
        if (worker.trigger.kind !== "queue") throw new Error("not a queue worker");
        expect(worker.handler).toBe(`packages/functions/src/lambda/workers/${queue}.handler`);
        expect(worker.trigger.batch).toEqual({ size: BATCH_SIZE, partialResponses: true });
        const mapping: Record<string, unknown> = {};
        worker.trigger.transform!.eventSourceMapping!(mapping);
        expect(mapping, queue).toEqual({ scalingConfig: { maximumConcurrency: WORKER_CONCURRENCY[queue] } });
        // SQS gives a message again only after the worker that took it can no longer be on it.
        expect(seconds(args.visibilityTimeout), queue).toBeGreaterThanOrEqual(6 * seconds(worker.timeout));
        // The dead letters are kept 14 days, for a redrive.
        expect(
          (named(infra, "sst.aws.Queue", `${logical}Dead`).args as { transform: { queue: unknown } }).transform.queue,
        ).toEqual({
          messageRetentionSeconds: 14 * 86_400,
        });
      }
    },
  );
});

describe("alarms", () => {
  type Alarm = {
    name: string;
    namespace: string;
    metricName: string;
    dimensions: Record<string, string>;
    statistic: string;
    threshold: number;
    comparisonOperator: string;
    period: number;
    evaluationPeriods: number;
    alarmActions: string[];
    treatMissingData: string;
  };
  const alarms = (infra: Infra) =>
    Object.fromEntries(
      componentsOf(infra, "aws.cloudwatch.MetricAlarm").map((c) => {
        const args = JSON.parse(
          JSON.stringify(c.args, (_k, v) => (v && typeof v === "object" && "value" in v ? v.value : v)),
        ) as Alarm;
        return [c.logicalName, args];
      }),
    );
  const all = alarms(production);
  const topicArn = (named(production, "sst.aws.SnsTopic", "Alarms") as unknown as { arn: { value: string } }).arn.value;
  const warningsArn = (named(production, "sst.aws.SnsTopic", "Warnings") as unknown as { arn: { value: string } }).arn
    .value;
  const seconds = (timeout: string | undefined) => {
    const [n, unit] = String(timeout).split(" ");
    return Number(n) * (unit!.startsWith("minute") ? 60 : 1);
  };

  it("every function: errors, throttles, and a run near its timeout, by its fixed name", () => {
    for (const fn of functionsOf(production) as InfraFunction[]) {
      const logical = String(fn.name).replace("invoicing-production-", "");
      expect(all[`${logical}Errors`], logical).toMatchObject({
        namespace: "AWS/Lambda",
        metricName: "Errors",
        dimensions: { FunctionName: fn.name },
        threshold: 1,
      });
      expect(all[`${logical}Throttles`], logical).toMatchObject({
        metricName: "Throttles",
        dimensions: { FunctionName: fn.name },
        threshold: 1,
      });
      expect(all[`${logical}NearTimeout`], logical).toMatchObject({
        metricName: "Duration",
        statistic: "Maximum",
        dimensions: { FunctionName: fn.name },
        threshold: seconds(fn.timeout) * 800,
      });
    }
  });

  it("the stream, the API, the table, SES and the app's own metrics", () => {
    const subscriber = subscriberOf(production);
    expect(all.StreamIteratorAge).toMatchObject({
      namespace: "AWS/Lambda",
      metricName: "IteratorAge",
      dimensions: { FunctionName: subscriber.name },
      threshold: 60_000,
    });
    expect(all.StreamFailuresNotEmpty).toMatchObject({
      namespace: "AWS/SQS",
      metricName: "ApproximateNumberOfMessagesVisible",
      dimensions: { QueueName: "invoicing-production-StreamFailuresQueue" },
      comparisonOperator: "GreaterThanOrEqualToThreshold",
      threshold: 1,
    });
    expect(all.Api5xx).toMatchObject({
      namespace: "AWS/ApiGateway",
      metricName: "5xx",
      dimensions: { ApiId: "api123abc", Stage: "$default" },
    });
    expect(all.TableReadThrottles).toMatchObject({
      namespace: "AWS/DynamoDB",
      metricName: "ReadThrottleEvents",
      dimensions: { TableName: "invoicing-production-TableTable" },
    });
    expect(all.TableWriteThrottles).toMatchObject({ metricName: "WriteThrottleEvents" });
    expect(all.SesBounceRate).toMatchObject({
      namespace: "AWS/SES",
      metricName: "Reputation.BounceRate",
      comparisonOperator: "GreaterThanThreshold",
      threshold: 0.05,
    });
    expect(all.SesComplaintRate).toMatchObject({ metricName: "Reputation.ComplaintRate", threshold: 0.001 });
    for (const [name, metric] of [
      ["EmailsFailed", METRIC.emailsFailed],
      ["StreamRecordsSkipped", METRIC.streamRecordsSkipped],
      ["OptimisticLoopExhausted", METRIC.optimisticLoopExhausted],
    ])
      expect(all[name!], name).toMatchObject({
        namespace: METRICS_NAMESPACE,
        metricName: metric,
        dimensions: { service: "invoicing", stage: "production" },
      });
  });

  /** Issue 39 item 12: what only warns (the Warnings topic): a backlog worked through by design, SES's early signs. */
  const WARNINGS = [
    "WebhooksJobNearTimeout",
    "StreamSubscriberNearTimeout",
    "SesBounceRateWarning",
    "SesComplaintRateWarning",
  ];

  it("every alarm pages (Alarms topic) or, for what is a warning, informs (Warnings topic); quiet is fine but for jobs", () => {
    // 19 functions × 3 (11 and the 8 queue workers), 6 jobs not running, scheduler errors, 2 failure
    // queues, iterator age, 5xx, 2 table, 4 SES, 3 app, and 2 per work queue (issue 37).
    expect(Object.keys(all).length).toBe(19 * 3 + 6 + 1 + 2 + 1 + 1 + 2 + 4 + 3 + 8 * 2);
    for (const [name, alarm] of Object.entries(all)) {
      expect(alarm.alarmActions, name).toEqual([WARNINGS.includes(name) ? warningsArn : topicArn]);
      expect(alarm.treatMissingData, name).toBe(name.endsWith("NotRunning") ? "breaching" : "notBreaching");
      expect(alarm.name, name).toBe(`invoicing-production-${name}`);
    }
    expect(all.SesBounceRateWarning).toMatchObject({ metricName: "Reputation.BounceRate", threshold: 0.02 });
    expect(all.SesComplaintRateWarning).toMatchObject({ metricName: "Reputation.ComplaintRate", threshold: 0.0005 });
    // Other NearTimeouts page.
    expect(all.ApiNearTimeout!.alarmActions).toEqual([topicArn]);
  });

  it("a personal stage has no alarm, topic, dashboard or budget (they would page nobody)", async () => {
    const alice = await evaluateInfra({ stage: "alice", env: {} });
    expect(componentsOf(alice, "aws.cloudwatch.MetricAlarm")).toEqual([]);
    expect(componentsOf(alice, "sst.aws.SnsTopic").map((t) => t.logicalName)).toEqual(["EmailFeedback"]);
    expect(componentsOf(alice, "aws.cloudwatch.Dashboard")).toEqual([]);
    expect(componentsOf(alice, "aws.budgets.Budget")).toEqual([]);
  });

  it("every work queue alarms when its oldest message is old, and when its dead-letter queue is not empty", () => {
    for (const queue of QUEUE_NAMES) {
      const logical = QUEUE_RESOURCES[queue];
      const base = logical.replace(/Queue$/, "");
      expect(all[`${base}QueueBacklog`], queue).toMatchObject({
        namespace: "AWS/SQS",
        metricName: "ApproximateAgeOfOldestMessage",
        dimensions: { QueueName: `invoicing-production-${logical}Queue` },
        statistic: "Maximum",
      });
      expect(all[`${base}DeadLetters`], queue).toMatchObject({
        namespace: "AWS/SQS",
        metricName: "ApproximateNumberOfMessagesVisible",
        dimensions: { QueueName: `invoicing-production-${logical}DeadQueue` },
        threshold: 1,
      });
    }
  });

  it("the stage settings' targets are subscribed: pager emails and HTTPS to Alarms, warning emails to Warnings", () => {
    const subscriptions = componentsOf(production, "aws.sns.TopicSubscription").map((c) => {
      const args = c.args as { topic: { value: string }; protocol: string; endpoint: string };
      return [args.topic.value === topicArn ? "Alarms" : "Warnings", args.protocol, args.endpoint];
    });
    expect(subscriptions).toEqual([
      ["Alarms", "email", "oncall@example.com"],
      ["Warnings", "email", "ops@example.com"],
    ]);
  });
});

describe("the SES feedback topic's policy", () => {
  it.each(["dev", "production"])("in %s SES may publish, for this account's configuration set only", (stage) => {
    const infra = stage === "production" ? production : dev;
    const topic = named(infra, "sst.aws.SnsTopic", "EmailFeedback") as unknown as { arn: { value: string } };
    const policy = named(infra, "aws.sns.TopicPolicy", "EmailFeedbackPolicy");
    expect((policy.args.arn as { value: string }).value).toBe(topic.arn.value);
    const document = JSON.parse((policy.args.policy as { value: string }).value);
    expect(document).toEqual({
      Version: "2012-10-17",
      Statement: [
        {
          Sid: "SesPublishesFeedbackOfThisConfigurationSet",
          Effect: "Allow",
          Principal: { Service: "ses.amazonaws.com" },
          Action: "SNS:Publish",
          Resource: topic.arn.value,
          Condition: {
            StringEquals: {
              "AWS:SourceAccount": "123456789012",
              "AWS:SourceArn": `arn:aws:ses:us-east-1:123456789012:configuration-set/invoicing-${stage}-email`,
            },
          },
        },
      ],
    });
  });
});

/** Each api.route() is its own component (not the API's child): the route args transform marks it. */
const routeRetained = (infra: Infra): boolean | undefined => {
  const api = named(infra, "sst.aws.ApiGatewayV2", "Api");
  const transform = (api.args.transform as { route: { args: (a: object, o: { retainOnDelete?: boolean }) => void } })
    .route.args;
  const opts: { retainOnDelete?: boolean } = {};
  transform({}, opts);
  return opts.retainOnDelete;
};

describe("what production keeps", () => {
  it("the API and every route (its integration, permission, function), the SES identity and configuration set", () => {
    expect(named(production, "sst.aws.ApiGatewayV2", "Api").opts.retainOnDelete).toBe(true);
    expect(routeRetained(production)).toBe(true);
    expect(named(production, "sst.aws.Email", "Email").opts.retainOnDelete).toBe(true);
    expect(named(production, "aws.sesv2.ConfigurationSet", "EmailConfigurationSet").opts.retainOnDelete).toBe(true);
  });

  it("function log groups keep a year and go with their function (a retained fixed name would block re-adding it)", () => {
    for (const fn of functionsOf(production)) {
      expect(fn.logging, fn.id).toEqual({ retention: "1 year", format: "text" });
      expect((fn.transform as { logGroup?: unknown } | undefined)?.logGroup, fn.id).toBeUndefined();
    }
  });

  it("point-in-time recovery of the table: on in production only", () => {
    const pitr = (infra: Infra) => {
      const args: { pointInTimeRecovery?: unknown } = {};
      (named(infra, "sst.aws.Dynamo", "Table").args.transform.table as (a: typeof args) => void)(args);
      return args.pointInTimeRecovery;
    };
    expect(pitr(production)).toEqual({ enabled: true });
    expect(pitr(dev)).toEqual({ enabled: false });
  });

  it("other stages keep nothing, and keep logs two weeks", () => {
    expect(named(dev, "sst.aws.ApiGatewayV2", "Api").opts.retainOnDelete).toBe(false);
    expect(named(dev, "sst.aws.Email", "Email").opts.retainOnDelete).toBe(false);
    expect(routeRetained(dev)).toBeUndefined();
    for (const fn of functionsOf(dev)) expect(fn.logging, fn.id).toEqual({ retention: "2 weeks", format: "text" });
  });
});

describe("jobs", () => {
  it("are never retried, by the scheduler or by Lambda: the next run catches up", () => {
    const crons = componentsOf(production, "sst.aws.CronV2");
    expect(crons.length).toBe(6);
    for (const cron of crons) {
      expect(cron.args.retries, cron.logicalName).toBe(0);
      expect((cron.args.function as { retries: number }).retries, cron.logicalName).toBe(0);
    }
  });
});
