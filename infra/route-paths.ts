import { execFileSync } from "node:child_process";

type Derived = { documents: string[]; payments: string[] };

/**
 * The paths the documents and payments functions serve,
 * derived from their route modules (packages/functions/src/app/route-paths.ts) by running
 * scripts/route-paths.ts with tsx: SST evaluates infra in its own process, which cannot load the
 * route modules itself. So a route added to a module is routed at the next deploy, with nothing
 * else to edit.
 */
export function functionPaths(): Derived {
  if (known) return known;
  const out = execFileSync(process.execPath, ["--import", "tsx", "scripts/route-paths.ts"], {
    encoding: "utf8",
    env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
  });
  known = JSON.parse(out) as Derived;
  return known;
}

let known: Derived | undefined;
