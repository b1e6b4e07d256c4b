/**
 * Runs sst.config.ts offline, the way `sst deploy` starts: esbuild bundles it, `app()` gives the
 * app settings, `run()` declares the components. Here the `sst` and `$app` globals are recorders
 * instead of Pulumi-backed components, so what infra declares (the table's args, each function's
 * handler, runtime, links, schedule, …) becomes plain data that `npm run build` and the tests in
 * test/deploy read: the handlers they bundle and the table they compare are the ones infra names,
 * not a second list. Type-checking the same files against SST's real types is
 * scripts/typecheck-infra.mjs; together they stand in for a deploy.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Placeholder outputs: values AWS only knows after a deploy. */
const fakeOutput = (what) => `https://${what}.invalid`;
const ACCOUNT = "123456789012";
const REGION = "us-east-1";

/**
 * A stand-in for Pulumi's Output: a value known now, with `apply`. Infra code that derives values
 * from outputs (an ARN pattern, DNS records) runs its real callbacks on these placeholders.
 */
class FakeOutput {
  constructor(value) {
    this.value = value;
  }
  apply(fn) {
    return new FakeOutput(resolveOutputs(fn(this.value)));
  }
}

/** The plain value of anything holding FakeOutputs (as Pulumi resolves outputs before using them). */
function resolveOutputs(value) {
  if (value instanceof FakeOutput) return resolveOutputs(value.value);
  if (Array.isArray(value)) return value.map(resolveOutputs);
  if (value && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveOutputs(v)]));
  }
  return value;
}

class Recorded {
  constructor(recorder, kind, logicalName, args, opts = {}) {
    this.kind = kind;
    this.logicalName = logicalName;
    this.args = args;
    // The resource options (retainOnDelete, …): SST passes a component's to all its children.
    this.opts = opts;
    recorder.components.push(this);
  }
}

/** sst.aws.permission / the include entries of a link, as SST's permission() builds them. */
const permission = (input) => ({ type: "aws.permission", ...input });

/**
 * What linking each kind of component gives a function by default: its properties (the `Resource.<Name>`
 * values) and its AWS permissions, as SST 4.17.1's getSSTLink() returns them
 * (.sst/platform/src/components/…; test/deploy/infra.test.ts compares the two). `sst.Linkable.wrap`
 * replaces one, as in SST.
 */
const defaultLinks = {
  "sst.aws.Dynamo": (c) => ({
    properties: { name: c.name },
    include: [permission({ actions: ["dynamodb:*"], resources: [c.arn, c.arn.apply((arn) => `${arn}/*`)] })],
  }),
  "sst.aws.Email": (c) => ({
    properties: { sender: c.sender, configSet: c.configSet },
    include: [
      permission({ actions: ["ses:*"], resources: [c.nodes.identity.arn, c.nodes.configurationSet.arn] }),
      permission({ actions: ["ses:SendEmail", "ses:SendRawEmail", "ses:SendTemplatedEmail"], resources: ["*"] }),
    ],
  }),
  "sst.aws.ApiGatewayV2": (c) => ({ properties: { url: c.url } }),
  "sst.aws.Bus": (c) => ({
    properties: { name: c.name, arn: c.arn },
    include: [permission({ actions: ["events:*"], resources: [c.arn] })],
  }),
  "sst.aws.SnsTopic": (c) => ({
    properties: { arn: c.arn },
    include: [permission({ actions: ["sns:*"], resources: [c.arn] })],
  }),
  "sst.aws.Queue": (c) => ({
    properties: { url: c.url },
    include: [permission({ actions: ["sqs:*"], resources: [c.arn] })],
  }),
  // A function's URL exists only with `url` set (SST links urlEndpoint, undefined otherwise).
  "sst.aws.Function": (c) => ({ properties: { name: c.functionName, ...(c.args.url ? { url: c.url } : {}) } }),
  "sst.sst.Secret": (c) => ({ properties: { value: c.args.placeholder } }),
  "sst.sst.Linkable": (c) => c.args,
};

function fakeSst(recorder, secrets = {}) {
  const component = (kind, extra = () => ({})) => {
    const cls = class extends Recorded {
      constructor(name, args = {}, opts = {}) {
        super(recorder, kind, name, args, opts);
        Object.assign(this, extra(this, name, args));
      }
    };
    if (defaultLinks[kind])
      cls.prototype.getSSTLink = function () {
        return defaultLinks[kind](this);
      };
    return cls;
  };
  const arn = (service, resource) => new FakeOutput(`arn:aws:${service}:${REGION}:${ACCOUNT}:${resource}`);
  const emailOutputs = (_self, name, args) => ({
    sender: new FakeOutput(args.sender),
    configSet: new FakeOutput(`${name}Config-placeholder`),
    nodes: {
      identity: {
        arn: arn("ses", `identity/${args.sender}`),
        dkimSigningAttributes: new FakeOutput({ tokens: ["dkimtoken1", "dkimtoken2", "dkimtoken3"] }),
      },
      configurationSet: { arn: arn("ses", `configuration-set/${name}Config-placeholder`) },
    },
  });
  const Email = component("sst.aws.Email", emailOutputs);
  // sst.aws.Email.get: a reference to an identity another stage created (args { ref, sender }, as SST).
  Email.get = (name, sender) => new Email(name, { ref: true, sender });
  const SnsTopic = component("sst.aws.SnsTopic", (self, name) => ({
    arn: arn("sns", `${recorder.app.name}-${recorder.stage}-${name}`),
    subscribers: [],
    subscribe(subscriberName, subscriber, args = {}) {
      self.subscribers.push({ name: subscriberName, subscriber, args });
      // SST's Output<SnsTopicLambdaSubscriber>: its function's name is the fixed one infra gives it.
      const functionName = typeof subscriber === "object" && subscriber.name ? subscriber.name : subscriberName;
      return new FakeOutput({ nodes: { function: { name: new FakeOutput(functionName) } } });
    },
  }));
  const known = {
    aws: {
      Dynamo: component("sst.aws.Dynamo", (self, name) => {
        const tableName = `${recorder.app.name}-${recorder.stage}-${name}Table`;
        return {
          name: tableName,
          arn: arn("dynamodb", `table/${tableName}`),
          streamArn: arn("dynamodb", `table/${tableName}/stream/2026-01-01T00:00:00.000`),
          // The stream's Lambda subscriber: recorded like a function, triggered by the table's stream.
          subscribe(subscriberName, subscriber, args = {}) {
            if (!self.args.stream) throw new Error(`Cannot subscribe to "${name}" because stream is not enabled.`);
            return new Recorded(recorder, "sst.aws.DynamoLambdaSubscriber", subscriberName, {
              table: name,
              subscriber,
              ...args,
            });
          },
        };
      }),
      Bus: component("sst.aws.Bus", (_self, name) => {
        const busName = `${recorder.app.name}-${recorder.stage}-${name}Bus`;
        return { name: busName, arn: arn("events", `event-bus/${busName}`) };
      }),
      Email,
      ApiGatewayV2: component("sst.aws.ApiGatewayV2", (self, name, args) => ({
        // With a domain, SST's url is the domain's (apigatewayv2.ts, `get url`).
        url: args.domain ? `https://${args.domain.name}` : fakeOutput(name.toLowerCase()),
        nodes: {
          api: { id: new FakeOutput(`${name.toLowerCase()}123abc`) },
          get domainName() {
            if (!args.domain) throw new Error(`"nodes.domainName" is not available when domain is not configured`);
            return {
              domainNameConfiguration: {
                targetDomainName: new FakeOutput(`d-abc123.execute-api.${REGION}.amazonaws.com`),
              },
            };
          },
        },
        routes: [],
        route(rawRoute, handler, args = {}) {
          self.routes.push({ rawRoute, handler, args });
          return new Recorded(recorder, "sst.aws.ApiGatewayV2LambdaRoute", `${name} ${rawRoute}`, { handler, ...args });
        },
      })),
      CronV2: component("sst.aws.CronV2"),
      Function: component("sst.aws.Function", (_self, name) => ({
        url: fakeOutput(name.toLowerCase()),
        functionName: name,
        arn: `arn:aws:lambda:us-east-1:123456789012:function:${recorder.app.name}-${recorder.stage}-${name}`,
      })),
      SnsTopic,
      Queue: component("sst.aws.Queue", (_self, name) => {
        const queueName = `${recorder.app.name}-${recorder.stage}-${name}Queue`;
        const queueArn = arn("sqs", queueName);
        return {
          arn: queueArn,
          url: new FakeOutput(`https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${queueName}`),
          nodes: { queue: { name: new FakeOutput(queueName) } },
          // A queue's Lambda worker (SST's QueueLambdaSubscriber): recorded like a function, triggered by the queue.
          subscribe(subscriber, args = {}) {
            return new Recorded(recorder, "sst.aws.QueueLambdaSubscriber", `${name}Subscriber`, {
              queue: name,
              queueArn,
              subscriber,
              ...args,
            });
          },
        };
      }),
      permission,
      // sst.aws.dns(): Route 53, the zone found by the domain's name at deploy.
      dns: (args = {}) => ({ provider: "aws", ...args }),
    },
    Secret: class extends Recorded {
      constructor(name, placeholder) {
        super(recorder, "sst.sst.Secret", name, { placeholder });
        // The secret's value: the placeholder until `sst secret set` (a deploy knows the real one);
        // `secrets` stands for what `sst secret set` stored.
        this.value = new FakeOutput(secrets[name] ?? placeholder);
      }
      getSSTLink() {
        return defaultLinks["sst.sst.Secret"](this);
      }
    },
    Linkable: Object.assign(
      component("sst.sst.Linkable", (_self, _name, args) => ({ properties: args.properties })),
      {
        // As SST's Linkable.wrap: every instance of `cls` links as `cb` says.
        wrap(cls, cb) {
          cls.prototype.getSSTLink = function () {
            return cb(this);
          };
        },
      },
    ),
  };
  return guard(known, "sst");
}

/** Pulumi's AWS classes infra uses directly, recorded like SST's components. */
function fakeAws(recorder) {
  const resource = (kind, extra = () => ({})) =>
    class extends Recorded {
      constructor(name, args = {}, opts = {}) {
        super(recorder, kind, name, args, opts);
        Object.assign(this, extra(name, args));
      }
    };
  return guard(
    {
      sesv2: {
        ConfigurationSet: resource("aws.sesv2.ConfigurationSet", (_name, args) => ({
          configurationSetName: new FakeOutput(args.configurationSetName),
          arn: new FakeOutput(`arn:aws:ses:${REGION}:${ACCOUNT}:configuration-set/${args.configurationSetName}`),
        })),
        ConfigurationSetEventDestination: resource("aws.sesv2.ConfigurationSetEventDestination"),
        EmailIdentity: resource("aws.sesv2.EmailIdentity", (_name, args) => ({
          arn: new FakeOutput(`arn:aws:ses:${REGION}:${ACCOUNT}:identity/${args.emailIdentity}`),
          dkimSigningAttributes: new FakeOutput({ tokens: ["dkimtoken1", "dkimtoken2", "dkimtoken3"] }),
        })),
      },
      sns: {
        TopicPolicy: resource("aws.sns.TopicPolicy"),
        TopicSubscription: resource("aws.sns.TopicSubscription"),
      },
      cloudwatch: {
        MetricAlarm: resource("aws.cloudwatch.MetricAlarm"),
        Dashboard: resource("aws.cloudwatch.Dashboard"),
      },
      lambda: {
        FunctionEventInvokeConfig: resource("aws.lambda.FunctionEventInvokeConfig"),
      },
      budgets: {
        Budget: resource("aws.budgets.Budget"),
      },
      iam: {
        Role: resource("aws.iam.Role", (name) => ({
          name: new FakeOutput(`${name}-placeholder`),
          arn: new FakeOutput(`arn:aws:iam::${ACCOUNT}:role/${name}-placeholder`),
        })),
        RolePolicy: resource("aws.iam.RolePolicy"),
      },
      chatbot: {
        SlackChannelConfiguration: resource("aws.chatbot.SlackChannelConfiguration"),
        TeamsChannelConfiguration: resource("aws.chatbot.TeamsChannelConfiguration"),
      },
    },
    "aws",
  );
}

// A component without a recorder fails loudly rather than being silently skipped.
function guard(target, path) {
  return new Proxy(target, {
    get(object, key) {
      if (typeof key !== "string" || key in object) {
        const value = object[key];
        return value && typeof value === "object" && !Array.isArray(value) ? guard(value, `${path}.${key}`) : value;
      }
      throw new Error(
        `scripts/infra.mjs has no offline recorder for ${path}.${key}: add one so the deploy checks see it`,
      );
    },
  });
}

/**
 * An esbuild plugin that makes infra/stages.ts's map say `stages` (a partial map: `production`
 * and/or `dev`, each replacing that stage's settings whole), so a test can evaluate the infra of
 * settings the repository does not hold (a Chatbot target, a certificate) through the same code.
 */
const stagesOverride = (stages) => ({
  name: "stages-override",
  setup(build) {
    build.onLoad({ filter: /[\\/]infra[\\/]stages\.ts$/ }, (args) => {
      const source = readFileSync(args.path, "utf8");
      return { contents: `${source}\nObject.assign(STAGES, ${JSON.stringify(stages)});\n`, loader: "ts" };
    });
  },
});

/**
 * Evaluates sst.config.ts for `stage`. `env` is set while it runs (infra reads deploy-time
 * settings such as EMAIL_SENDER from the deploying shell); `secrets` (name → value) as if set with
 * `sst secret set`; `stages`, settings that replace the map's (stagesOverride above). Returns the
 * app settings, run()'s outputs and every component declared, in order.
 */
export async function evaluateInfra({ stage = "dev", env = {}, secrets = {}, stages } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "infra-eval-"));
  const saved = { env: {}, globals: {} };
  const recorder = { stage, components: [], app: undefined };
  try {
    const outfile = join(dir, "sst.config.mjs");
    await build({
      entryPoints: [join(root, "sst.config.ts")],
      outfile,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      logLevel: "silent",
      plugins: stages ? [stagesOverride(stages)] : [],
    });
    const globals = {
      $config: (config) => config,
      $dev: false,
      sst: fakeSst(recorder, secrets),
      aws: fakeAws(recorder),
      // Pulumi's all(), on placeholders: the values now.
      $util: { all: (values) => new FakeOutput(resolveOutputs(values)) },
    };
    for (const [name, value] of Object.entries(globals)) {
      saved.globals[name] = Object.getOwnPropertyDescriptor(globalThis, name);
      globalThis[name] = value;
    }
    for (const [name, value] of Object.entries(env)) {
      saved.env[name] = process.env[name];
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    const { default: config } = await import(pathToFileURL(outfile).href);
    const app = await config.app({ stage });
    recorder.app = app;
    saved.globals.$app = Object.getOwnPropertyDescriptor(globalThis, "$app");
    globalThis.$app = { ...app, stage };
    const outputs = await config.run();
    // What each linkable component links as, taken while the program's globals exist (a
    // Linkable.wrap callback may use them), as SST does when it builds a function's links.
    for (const component of recorder.components) {
      if (typeof component.getSSTLink === "function") component.link = resolveOutputs(component.getSSTLink());
    }
    return { app, outputs: resolveOutputs(outputs ?? {}), components: recorder.components };
  } finally {
    for (const [name, descriptor] of Object.entries(saved.globals)) {
      if (descriptor) Object.defineProperty(globalThis, name, descriptor);
      else delete globalThis[name];
    }
    for (const [name, value] of Object.entries(saved.env)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The components of one kind, by logical name. */
export function componentsOf(infra, kind) {
  return infra.components.filter((c) => c.kind === kind);
}

/**
 * Every Lambda function infra declares, with its settings normalised the way SST's components do:
 * an API route given function args creates a function of its own, which gets the API's links too;
 * a route given a function's ARN invokes that function (an `sst.aws.Function`), which may serve
 * several routes; a CronV2's `function` (or deprecated `job`) may be a bare handler string; CronV2
 * invokes it with its `event`, `{}` by default.
 */
export function functionsOf(infra) {
  const functions = [];
  const normalise = (id, input, extra) => {
    const args = typeof input === "string" ? { handler: input } : { ...input };
    functions.push({ id, ...args, link: [...(extra.link ?? []), ...(args.link ?? [])], ...extra.meta });
  };
  // Routes to an existing function, by its ARN: API name and routes, per ARN.
  const routedByArn = new Map();
  for (const component of infra.components) {
    if (component.kind !== "sst.aws.ApiGatewayV2") continue;
    for (const route of component.routes) {
      if (typeof route.handler !== "string" || !route.handler.startsWith("arn:")) continue;
      const entry = routedByArn.get(route.handler) ?? { api: component.logicalName, routes: [] };
      entry.routes.push(route.rawRoute);
      routedByArn.set(route.handler, entry);
    }
  }
  for (const component of infra.components) {
    if (component.kind === "sst.aws.ApiGatewayV2") {
      for (const route of component.routes) {
        if (typeof route.handler === "string" && route.handler.startsWith("arn:")) continue;
        normalise(`${component.logicalName} ${route.rawRoute}`, route.handler, {
          link: component.args.link,
          meta: { trigger: { kind: "api", api: component.logicalName, routes: [route.rawRoute] } },
        });
      }
    } else if (component.kind === "sst.aws.CronV2") {
      const input = component.args.function ?? component.args.job;
      if (!input) continue; // a CronV2 running an ECS task: no Lambda to bundle
      normalise(component.logicalName, input, {
        meta: { trigger: { kind: "cron", schedule: component.args.schedule, event: component.args.event ?? {} } },
      });
    } else if (component.kind === "sst.aws.DynamoLambdaSubscriber") {
      normalise(component.logicalName, component.args.subscriber, {
        meta: {
          trigger: {
            kind: "stream",
            table: component.args.table,
            filters: component.args.filters,
            transform: component.args.transform,
          },
        },
      });
    } else if (component.kind === "sst.aws.QueueLambdaSubscriber") {
      normalise(component.logicalName, component.args.subscriber, {
        meta: {
          trigger: {
            kind: "queue",
            queue: component.args.queue,
            batch: component.args.batch,
            transform: component.args.transform,
          },
        },
      });
    } else if (component.kind === "sst.aws.SnsTopic") {
      for (const { name, subscriber } of component.subscribers) {
        normalise(name, subscriber, { meta: { trigger: { kind: "sns", topic: component.logicalName } } });
      }
    } else if (component.kind === "sst.aws.Function") {
      const routed = routedByArn.get(component.arn);
      const trigger = routed ? { kind: "api", api: routed.api, routes: routed.routes } : { kind: "invoke" };
      normalise(component.logicalName, component.args, { meta: { trigger } });
    }
  }
  const known = new Set(infra.components.filter((c) => c.kind === "sst.aws.Function").map((c) => c.arn));
  for (const arn of routedByArn.keys()) {
    if (!known.has(arn)) throw new Error(`an API route invokes ${arn}, which is no function infra declares`);
  }
  return functions;
}

/** Logical names of what a function links (table, email, secrets, …). */
export const linkNames = (fn) => fn.link.map((resource) => resource.logicalName);

/**
 * The IAM statements a function's role gets from its links, as SST's Function builds them
 * (function.ts: Link.getInclude("aws.permission", link)), outputs resolved.
 */
export function linkPermissions(fn) {
  return fn.link
    .flatMap((resource) => resource.link?.include ?? [])
    .filter((include) => include.type === "aws.permission")
    .map(({ type: _type, ...statement }) => statement);
}

/**
 * Every IAM statement a function's role gets: its links' (above), its own `permissions`, and what its
 * trigger adds — SST's DynamoLambdaSubscriber lets the function read the table's stream
 * (dynamo-lambda-subscriber.ts). Outputs resolved.
 */
export function rolePermissions(fn, infra) {
  const own = resolveOutputs(fn.permissions ?? []).map(({ type: _type, ...statement }) => statement);
  const trigger = [];
  if (fn.trigger.kind === "stream") {
    const table = infra.components.find((c) => c.kind === "sst.aws.Dynamo" && c.logicalName === fn.trigger.table);
    trigger.push({
      actions: ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams"],
      resources: [resolveOutputs(table.streamArn)],
    });
  }
  if (fn.trigger.kind === "queue") {
    // SST's QueueLambdaSubscriber (queue-lambda-subscriber.ts): the worker may receive and delete.
    const queue = infra.components.find((c) => c.kind === "sst.aws.Queue" && c.logicalName === fn.trigger.queue);
    trigger.push({
      actions: [
        "sqs:ChangeMessageVisibility",
        "sqs:DeleteMessage",
        "sqs:GetQueueAttributes",
        "sqs:GetQueueUrl",
        "sqs:ReceiveMessage",
      ],
      resources: [resolveOutputs(queue.arn)],
    });
  }
  return [...linkPermissions(fn), ...own, ...trigger];
}

/** What `Resource.<Name>` holds for a linked component: its link properties plus SST's `type`. */
export function linkProperties(component) {
  return { ...component.link.properties, type: component.kind };
}
