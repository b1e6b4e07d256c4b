/**
 * Bundles a Lambda handler the way SST 4 does when it deploys a Node.js function (its Go runtime,
 * pkg/runtime/node/build.go): esbuild, one ESM `.mjs` file per function, platform node, everything
 * bundled but sharp and pg-native, `module` before `main`, names kept, minified (SST's
 * `nodejs.minify` default), and a banner that gives ESM code the `require`, `__filename` and
 * `__dirname` that CommonJS dependencies expect. The target is the function's runtime (nodejs22.x
 * → node22), so code that runtime cannot parse fails here. `npm run build` and the bundle test
 * (test/deploy/bundles.test.ts) both call this, on the handlers infra names (scripts/infra.mjs).
 */
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { root } from "./infra.mjs";

const banner = [
  `import { createRequire as topLevelCreateRequire } from 'module';`,
  `const require = topLevelCreateRequire(import.meta.url);`,
  `import { fileURLToPath as topLevelFileUrlToPath, URL as topLevelURL } from "url"`,
  `const __filename = topLevelFileUrlToPath(import.meta.url)`,
  `const __dirname = topLevelFileUrlToPath(new topLevelURL(".", import.meta.url))`,
].join("\n");

/** "packages/functions/src/api.handler" → the source file and the export Lambda calls. */
export function resolveHandler(handler) {
  const dot = handler.lastIndexOf(".");
  if (dot <= 0) throw new Error(`handler "${handler}" is not <file>.<export>`);
  const base = handler.slice(0, dot);
  const exportName = handler.slice(dot + 1);
  // SST accepts the file with any of these extensions, in this order.
  for (const extension of [".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"]) {
    const file = join(root, base + extension);
    if (existsSync(file)) return { file, exportName };
  }
  throw new Error(`handler "${handler}": no file ${base}.ts (or .js, …) in ${root}`);
}

/** nodejs22.x → node22: esbuild's target for the runtime that will run the bundle. */
export function nodeTarget(runtime = "nodejs22.x") {
  const match = /^nodejs(\d+)\.x$/.exec(runtime);
  if (!match) throw new Error(`runtime "${runtime}" is not a Node.js Lambda runtime`);
  return `node${match[1]}`;
}

/** A directory-safe name for a function id such as "Api $default". */
export const functionDir = (id) => id.replace(/[^A-Za-z0-9_-]+/g, "-").replace(/^-|-$/g, "");

/** esbuild options for a function: SST's, with the function's runtime target and nodejs settings. */
function buildOptions(fn) {
  return {
    platform: "node",
    format: "esm",
    target: nodeTarget(fn.runtime),
    bundle: true,
    minify: fn.nodejs?.minify ?? true,
    keepNames: true,
    mainFields: ["module", "main"],
    external: ["sharp", "pg-native", ...(fn.nodejs?.install ?? [])],
    banner: { js: banner },
    logLevel: "silent",
  };
}

/**
 * Bundles functions (entries of functionsOf()) into `outdir/<function>/<file>.mjs`, one
 * self-contained file each, as SST does. Functions with the same options share one esbuild run
 * (several entry points, no code splitting: each output is the same file a separate run would
 * make), which parses the shared code once. Returns each bundle's path, export and size.
 */
export async function bundleFunctions(functions, outdir) {
  const groups = new Map();
  for (const fn of functions) {
    const options = buildOptions(fn);
    const key = JSON.stringify(options);
    if (!groups.has(key)) groups.set(key, { options, entries: [] });
    const { file, exportName } = resolveHandler(fn.handler);
    const name = file.slice(file.lastIndexOf("/") + 1).replace(/\.[^.]+$/, "").replaceAll(".", "-");
    const out = join(functionDir(fn.id), name);
    groups.get(key).entries.push({ fn, file, exportName, out });
  }
  const built = [];
  for (const { options, entries } of groups.values()) {
    await build({
      ...options,
      entryPoints: entries.map((entry) => ({ in: entry.file, out: entry.out })),
      outdir,
      outExtension: { ".js": ".mjs" },
    });
    for (const { fn, exportName, out } of entries) {
      const bundle = join(outdir, `${out}.mjs`);
      built.push({ id: fn.id, handler: fn.handler, bundle, exportName, bytes: statSync(bundle).size });
    }
  }
  return built;
}

/** One function: bundleFunctions([fn], outdir)[0]. */
export async function bundleFunction(fn, outdir) {
  const [built] = await bundleFunctions([fn], outdir);
  return built;
}
