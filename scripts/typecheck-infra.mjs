#!/usr/bin/env node
/**
 * Type-checks sst.config.ts and infra/** against SST's real platform types (issue 9): a component
 * argument SST does not accept fails here, without AWS.
 *
 * The types come from `sst install`, which writes .sst/platform (config.d.ts, the components'
 * sources, @pulumi/aws: ~300 MB, ~45 s, npm registry only; git-ignored). It runs only when
 * .sst/platform/config.d.ts is missing, and its result is kept in a cache outside the work tree
 * (~/.cache/invoicing/sst-platform/<sst version>-<sst.config.ts hash>, or $SST_PLATFORM_CACHE; only the
 * latest entry is kept), so
 * fresh clones on the same machine (CI) copy it in a second instead of installing again.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const sstDir = join(root, ".sst");
const platformTypes = join(sstDir, "platform", "config.d.ts");

function run(command, args, env = process.env) {
  const result = spawnSync(command, args, { cwd: root, env, stdio: "inherit" });
  if (result.error) throw result.error;
  if (result.status !== 0) process.exit(result.status ?? 1);
}

/** Same SST version and same config (which decides the providers) → same install. */
function cacheDir() {
  const version = JSON.parse(readFileSync(join(root, "node_modules", "sst", "package.json"), "utf8")).version;
  const config = createHash("sha256")
    .update(readFileSync(join(root, "sst.config.ts")))
    .digest("hex")
    .slice(0, 12);
  const base =
    process.env.SST_PLATFORM_CACHE ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "invoicing", "sst-platform");
  return join(base, `${version}-${config}`);
}

function installPlatform() {
  const cache = cacheDir();
  if (existsSync(join(cache, "platform", "config.d.ts"))) {
    console.error(`typecheck-infra: SST platform types from the cache ${cache}`);
    cpSync(cache, sstDir, { recursive: true });
    return;
  }
  console.error("typecheck-infra: installing SST's platform types (sst install, ~1 minute, once per SST version)");
  run("npx", ["--no-install", "sst", "install"], {
    ...process.env,
    SST_SKIP_DEPENDENCY_CHECK: "1",
    SST_NO_BUN: "1",
    SST_TELEMETRY_DISABLED: "1",
    SST_STAGE: process.env.SST_STAGE ?? "dev",
  });
  if (!existsSync(platformTypes)) {
    console.error(`typecheck-infra: sst install did not write ${platformTypes}`);
    process.exit(1);
  }
  try {
    // Copied under a temporary name, then renamed: an interrupted copy never looks like a cache.
    const partial = `${cache}.partial-${process.pid}`;
    mkdirSync(dirname(cache), { recursive: true });
    cpSync(sstDir, partial, { recursive: true });
    renameSync(partial, cache);
    // One entry is enough: older SST versions or configs would only fill the disk (~300 MB each).
    for (const entry of readdirSync(dirname(cache))) {
      if (join(dirname(cache), entry) !== cache) rmSync(join(dirname(cache), entry), { recursive: true, force: true });
    }
  } catch (error) {
    console.error(`typecheck-infra: could not cache the platform types (${error.message}); continuing`);
  }
}

if (!existsSync(platformTypes)) installPlatform();
run(process.execPath, [
  join(root, "node_modules", "typescript", "bin", "tsc"),
  "-p",
  join(root, "infra", "tsconfig.json"),
  "--noEmit",
]);
console.error("typecheck-infra: sst.config.ts and infra/ match SST's types");
