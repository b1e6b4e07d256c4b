/**
 * Runs sst.config.ts offline, the way `sst deploy` starts: esbuild bundles it, `app()` gives the
 * app settings, `run()` declares the components. Here the `sst` and `$app` globals are recorders
 * instead of Pulumi-backed components, so what infra declares (the table's args, each function's
 * handler, runtime, links, schedule, …) becomes plain data that `npm run build` and the tests in
 * test/deploy read: the handlers they bundle and the table they compare are the ones infra names,
 * not a second list. Type-checking the same files against SST's real types is
 * scripts/typecheck-infra.mjs; together they stand in for a deploy.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Placeholder outputs: values AWS only knows after a deploy. */
const fakeOutput = (what) => `https://${what}.invalid`;

class Recorded {
  constructor(recorder, kind, logicalName, args) {
    this.kind = kind;
    this.logicalName = logicalName;
    this.args = args;
    recorder.components.push(this);
  }
}

function fakeSst(recorder) {
  const component = (kind, extra = () => ({})) =>
    class extends Recorded {
      constructor(name, args = {}) {
        super(recorder, kind, name, args);
        Object.assign(this, extra(this, name, args));
      }
    };
  const known = {
    aws: {
      Dynamo: component("sst.aws.Dynamo", (_self, name) => ({ name: `${recorder.app.name}-${recorder.stage}-${name}Table` })),
      Email: component("sst.aws.Email", (_self, _name, args) => ({ sender: args.sender })),
      ApiGatewayV2: component("sst.aws.ApiGatewayV2", (self, name) => ({
        url: fakeOutput(name.toLowerCase()),
        routes: [],
        route(rawRoute, handler, args = {}) {
          self.routes.push({ rawRoute, handler, args });
          return new Recorded(recorder, "sst.aws.ApiGatewayV2LambdaRoute", `${name} ${rawRoute}`, { handler, ...args });
        },
      })),
      CronV2: component("sst.aws.CronV2"),
      Function: component("sst.aws.Function", (_self, name) => ({
        url: fakeOutput(name.toLowerCase()),
        arn: `arn:aws:lambda:us-east-1:123456789012:function:${recorder.app.name}-${recorder.stage}-${name}`,
      })),
    },
    Secret: class extends Recorded {
      constructor(name, placeholder) {
        super(recorder, "sst.sst.Secret", name, { placeholder });
      }
    },
    Linkable: component("sst.sst.Linkable"),
  };
  // A component without a recorder fails loudly rather than being silently skipped.
  const guard = (target, path) =>
    new Proxy(target, {
      get(object, key) {
        if (typeof key !== "string" || key in object) {
          const value = object[key];
          return value && typeof value === "object" && !Array.isArray(value) ? guard(value, `${path}.${key}`) : value;
        }
        throw new Error(`scripts/infra.mjs has no offline recorder for ${path}.${key}: add one so the deploy checks see it`);
      },
    });
  return guard(known, "sst");
}

/**
 * Evaluates sst.config.ts for `stage`. `env` is set while it runs (infra reads deploy-time
 * settings such as EMAIL_SENDER from the deploying shell). Returns the app settings, run()'s
 * outputs and every component declared, in order.
 */
export async function evaluateInfra({ stage = "dev", env = {} } = {}) {
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
    });
    for (const [name, value] of Object.entries({ $config: (config) => config, $dev: false, sst: fakeSst(recorder) })) {
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
    return { app, outputs: outputs ?? {}, components: recorder.components };
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
