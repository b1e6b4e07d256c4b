import { join } from "node:path";
import { build, type Metafile } from "esbuild";
import { describe, expect, it } from "vitest";
import type { Hono } from "hono";
import { createDb } from "@invoicing/core/db/dynamodb";
import { apiRouteModules } from "@invoicing/functions/app/api-routes";
import { documentRouteModules } from "@invoicing/functions/app/documents-routes";
import { paymentRouteModules } from "@invoicing/functions/app/payments-routes";
import { buildApp } from "@invoicing/functions/app/build-app";
import type { AppEnv } from "@invoicing/functions/http/app-env";
import { evaluateInfra, functionsOf, root } from "../../scripts/infra.mjs";

/**
 * Issue 19 / issue 21 item 6: the app runs as three HTTP functions (Api, Documents, Payments), each
 * with only the dependencies its routes need. Deployed, API Gateway decides which function answers
 * a path, so a route in the wrong module is unreachable: every documents route must be a path infra
 * sends to Documents, every card-processor route one it sends to Payments, and the API must serve
 * none of those paths. And the heavy SDKs stay out of the functions that do not use them.
 */
const infra = await evaluateInfra({ stage: "dev", env: { EMAIL_SENDER: "billing@example.com" } });
const routesOf = (id: string): string[] => {
  const fn = functionsOf(infra).find((f) => f.id === id);
  if (!fn || fn.trigger.kind !== "api") throw new Error(`infra has no API-routed function ${id}`);
  return fn.trigger.routes;
};
const deps = {
  db: createDb({ tableName: "unused", region: "local", dynamoEndpoint: "http://127.0.0.1:1" }),
  clock: () => new Date(),
};

/** The paths an app routes (Hono's :param and API Gateway's {param} both become "*"). */
function pathsOf(modules: readonly Hono<AppEnv>[]): Set<string> {
  const app = buildApp(deps, modules);
  return new Set(app.routes.filter((r) => r.method !== "ALL").map((r) => shape(r.path)));
}
const shape = (path: string): string => path.replace(/^\S+ /, "").replace(/\/(:\w+|\{\w+\})/g, "/*");

describe("each route is served by the function API Gateway sends its path to", () => {
  const documentPaths = new Set(routesOf("Documents").map(shape));
  const paymentPaths = new Set(routesOf("Payments").map(shape));

  it("every documents route is one of the paths routed to Documents", () => {
    const served = [...pathsOf(documentRouteModules)];
    expect(served.length).toBeGreaterThan(0);
    for (const path of served) expect(documentPaths, path).toContain(path);
  });

  it("every card-processor route is one of the paths routed to Payments", () => {
    const served = [...pathsOf(paymentRouteModules)];
    expect(served.sort()).toEqual([...paymentPaths].sort());
  });

  it("the API serves none of the documents or payments paths (it would never receive them)", () => {
    for (const path of pathsOf(apiRouteModules)) {
      expect(documentPaths, path).not.toContain(path);
      expect(paymentPaths, path).not.toContain(path);
    }
  });
});

/** The files a bundle of `entry` evaluates at init: imports followed, except dynamic import(). */
async function staticallyLoaded(entry: string): Promise<{ all: string[]; atInit: string[] }> {
  const result = await build({
    entryPoints: [join(root, entry)],
    bundle: true,
    platform: "node",
    format: "esm",
    write: false,
    metafile: true,
    logLevel: "silent",
    outdir: "/tmp/unused",
  });
  const { inputs } = result.metafile as Metafile;
  const start = Object.keys(inputs).find((path) => path.endsWith(entry))!;
  const seen = new Set<string>([start]);
  const todo = [start];
  while (todo.length) {
    for (const imported of inputs[todo.pop()!]?.imports ?? []) {
      if (imported.kind === "dynamic-import" || imported.external || seen.has(imported.path)) continue;
      seen.add(imported.path);
      todo.push(imported.path);
    }
  }
  return { all: Object.keys(inputs), atInit: [...seen] };
}

const HEAVY = {
  stripe: "node_modules/stripe/",
  ses: "node_modules/@aws-sdk/client-sesv2/",
  pdf: "node_modules/pdf-lib/",
};
const holds = (files: string[], dir: string) => files.some((file) => file.includes(dir));

describe("each function's bundle carries only what its routes use", () => {
  it("the API: neither pdf-lib nor Stripe at all (the stream subscriber expires sessions); SES never at init", async () => {
    const api = await staticallyLoaded("packages/functions/src/lambda/api.ts");
    expect(holds(api.all, HEAVY.pdf)).toBe(false);
    expect(holds(api.all, HEAVY.stripe)).toBe(false);
    expect(holds(api.atInit, HEAVY.ses)).toBe(false);
  });

  it("documents: pdf-lib, and neither Stripe nor SES", async () => {
    const documents = await staticallyLoaded("packages/functions/src/lambda/documents.ts");
    expect(holds(documents.all, HEAVY.pdf)).toBe(true);
    expect(holds(documents.all, HEAVY.stripe)).toBe(false);
    expect(holds(documents.all, HEAVY.ses)).toBe(false);
  });

  it("payments: Stripe, and neither pdf-lib nor SES", async () => {
    const payments = await staticallyLoaded("packages/functions/src/lambda/payments.ts");
    expect(holds(payments.all, HEAVY.stripe)).toBe(true);
    expect(holds(payments.all, HEAVY.pdf)).toBe(false);
    expect(holds(payments.all, HEAVY.ses)).toBe(false);
  });
});
