#!/usr/bin/env node
/**
 * `npm run build`: bundles every Lambda handler that infra declares (the API and each job) into
 * dist/<function>/, exactly as `sst deploy` would (scripts/bundle.mjs), and lists them with their
 * sizes. Nothing to deploy here; it shows what would ship and fails when a handler does not bundle.
 */
import { rmSync } from "node:fs";
import { join, relative } from "node:path";
import { bundleFunctions } from "./bundle.mjs";
import { evaluateInfra, functionsOf, root } from "./infra.mjs";

// dev's settings (infra/stages.ts); no stage setting changes any handler's bundle.
const infra = await evaluateInfra({ stage: "dev", env: {} });
const outdir = join(root, "dist");
rmSync(outdir, { recursive: true, force: true });
const built = await bundleFunctions(functionsOf(infra), outdir);
// KiB: the code a cold start loads; with code splitting (the API function), all its chunks' after it.
const kib = (bytes) => `${(bytes / 1024).toFixed(0).padStart(6)} KiB`;
for (const b of built) {
  const chunks = b.codeBytes === b.bytes ? "" : ` (${kib(b.codeBytes).trim()} with the chunks loaded at first use)`;
  console.log(
    `${b.id.padEnd(20)} ${b.handler.padEnd(52)} ${relative(root, b.bundle).padEnd(46)} ${kib(b.bytes)}${chunks}`,
  );
}
