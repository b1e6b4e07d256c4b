/**
 * Bundles a Lambda handler the way SST 4.17.1 does when it deploys a Node.js function (its Go
 * builder, pkg/runtime/node/build.go; function.ts packs the result): esbuild, one ESM file named
 * `bundle.mjs` per function (the handler becomes `bundle.<export>`), platform node, everything
 * bundled but sharp, pg-native and `nodejs.install` (which go to the zip's node_modules/), `module` before `main`, names kept, a linked
 * source map, and a banner that gives ESM code the `require`, `__filename` and `__dirname` that
 * CommonJS dependencies expect. The target is SST's for the runtime (nodejs22.x → es2023). It
 * minifies only when `nodejs.minify` is true (SST's documented default is true, its code's is false;
 * infra/runtime.ts sets it). The zip holds the bundle, the `copyFiles`, and the source map only when
 * `nodejs.sourcemap` is true (otherwise SST uploads the map to its bootstrap bucket instead).
 * `nodejs.esbuild.define` is passed to esbuild; with `nodejs.splitting` the function is built alone
 * into its directory, its entry named `bundle`, its chunks beside it (the API function, infra/api.ts).
 * `npm run build` and the bundle test (test/deploy/bundles.test.ts) both call this, on the handlers
 * infra names (scripts/infra.mjs).
 */
import { cpSync, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { build } from "esbuild";
import { root } from "./infra.mjs";

const banner = [
  `import { createRequire as topLevelCreateRequire } from 'module';`,
  `const require = topLevelCreateRequire(import.meta.url);`,
  `import { fileURLToPath as topLevelFileUrlToPath, URL as topLevelURL } from "url"`,
  `const __filename = topLevelFileUrlToPath(import.meta.url)`,
  `const __dirname = topLevelFileUrlToPath(new topLevelURL(".", import.meta.url))`,
].join("\n");

/** "packages/functions/src/lambda/api.handler" → the source file and the export Lambda calls. */
function resolveHandler(handler) {
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

/** SST's esbuild target per Lambda runtime (build.go's targetMap). */
const TARGETS = {
  "nodejs24.x": "es2024",
  "nodejs22.x": "es2023",
  "nodejs20.x": "es2023",
  "nodejs18.x": "es2022",
};

/** nodejs22.x → es2023: the target SST bundles a runtime's functions for. */
function esbuildTarget(runtime = "nodejs24.x") {
  const target = TARGETS[runtime];
  if (!target) throw new Error(`runtime "${runtime}" is not a Node.js Lambda runtime SST 4.17.1 maps to a target`);
  return target;
}

/** A directory-safe name for a function id such as "Api $default". */
const functionDir = (id) => id.replace(/[^A-Za-z0-9_-]+/g, "-").replace(/^-|-$/g, "");

/** esbuild options for a function: SST's, with the function's runtime target and nodejs settings. */
function buildOptions(fn) {
  const nodejs = fn.nodejs ?? {};
  return {
    platform: "node",
    format: "esm",
    // SST's default runtime is nodejs24.x when a function names none.
    target: esbuildTarget(fn.runtime ?? "nodejs24.x"),
    bundle: true,
    minify: nodejs.minify === true,
    keepNames: true,
    sourcemap: "linked",
    mainFields: ["module", "main"],
    external: ["sharp", "pg-native", ...installed(nodejs), ...(nodejs.esbuild?.external ?? [])],
    // SST passes `nodejs.esbuild.define` through (build.go `Define: properties.ESBuild.Define`).
    ...(nodejs.esbuild?.define ? { define: nodejs.esbuild.define } : {}),
    splitting: nodejs.splitting === true,
    banner: { js: banner },
    logLevel: "silent",
    metafile: true,
  };
}

/** `nodejs.install`'s package names (SST takes a list or a name → version record). */
const installed = (nodejs) => (Array.isArray(nodejs.install) ? nodejs.install : Object.keys(nodejs.install ?? {}));

/**
 * `nodejs.install`: left out of the bundle, and put in the zip's node_modules/ with what they depend
 * on. SST npm-installs them there, at the version `install` names ("*", the latest, for a bare
 * name); here they are copied from the project's node_modules, so a version that is not the one
 * installed there (the lock file's) is refused: the zip would not hold what the tests ran.
 */
function installInto(dir, install = {}) {
  for (const [name, version] of Object.entries(Array.isArray(install) ? {} : install)) {
    const manifest = join(root, "node_modules", name, "package.json");
    const locked = existsSync(manifest) && JSON.parse(readFileSync(manifest, "utf8")).version;
    if (locked && version !== "*" && version !== locked)
      throw new Error(`nodejs.install: ${name}@${version} is declared, but node_modules holds ${locked}`);
  }
  const copied = new Set();
  const copy = (name, from) => {
    if (copied.has(name)) return;
    copied.add(name);
    if (!existsSync(from)) throw new Error(`nodejs.install: ${name} is not in node_modules (npm ci first)`);
    cpSync(from, join(dir, "node_modules", name), { recursive: true, dereference: true });
    const { dependencies = {} } = JSON.parse(readFileSync(join(from, "package.json"), "utf8"));
    // A dependency nested under the package came along with it; the others are hoisted to the top.
    for (const dep of Object.keys(dependencies))
      if (!existsSync(join(from, "node_modules", dep))) copy(dep, join(root, "node_modules", dep));
  };
  for (const name of installed({ install })) copy(name, join(root, "node_modules", name));
}

/** Every file under `dir`, relative to it. */
function filesUnder(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath ?? entry.path, entry.name)))
    .sort();
}

/**
 * Bundles functions (entries of functionsOf()) into `outdir/<function>/bundle.mjs`, one
 * self-contained file each, with its `copyFiles` beside it, as SST lays out the function's zip.
 * Functions with the same options share one esbuild run (several entry points, no code splitting:
 * each output is the same file a separate run would make), which parses the shared code once.
 * Returns each bundle's path, export, size and the files its zip would hold.
 */
export async function bundleFunctions(functions, outdir) {
  const groups = new Map();
  for (const fn of functions) {
    const options = buildOptions(fn);
    const key = JSON.stringify(options);
    if (!groups.has(key)) groups.set(key, { options, entries: [] });
    const { file, exportName } = resolveHandler(fn.handler);
    const out = join(functionDir(fn.id), "bundle");
    groups.get(key).entries.push({ fn, file, exportName, out });
  }
  const built = [];
  for (const { options, entries } of groups.values()) {
    // With code splitting, SST builds the function alone into its own directory (`outdir` = the
    // bundle's, entry named `bundle`), its chunks beside the bundle; without, several entries share a run.
    const runs = options.splitting ? entries.map((entry) => [entry]) : [entries];
    const metafiles = new Map();
    for (const run of runs) {
      const result = await build({
        ...options,
        entryPoints: run.map((entry) => ({ in: entry.file, out: options.splitting ? "bundle" : entry.out })),
        outdir: options.splitting ? join(outdir, dirname(run[0].out)) : outdir,
        outExtension: { ".js": ".mjs" },
      });
      for (const entry of run) metafiles.set(entry, result.metafile);
    }
    for (const entry of entries) {
      const { fn, exportName, out } = entry;
      const bundle = join(outdir, `${out}.mjs`);
      const dir = dirname(bundle);
      for (const copy of fn.copyFiles ?? []) {
        // As SST: `from` relative to the project root, `to` (default: `from`) relative to the zip's root.
        const to = copy.to ?? copy.from;
        if (to.startsWith("/")) throw new Error(`${fn.id}: copyFiles destination "${to}" must be relative`);
        cpSync(join(root, copy.from), join(dir, to), { recursive: true });
      }
      installInto(dir, fn.nodejs?.install);
      const keepMap = fn.nodejs?.sourcemap === true;
      const zip = filesUnder(dir).filter((f) => keepMap || !f.endsWith(".map"));
      const code = zip.filter((f) => f.endsWith(".mjs") && !f.startsWith("node_modules/"));
      built.push({
        id: fn.id,
        handler: fn.handler,
        bundle,
        exportName,
        bytes: loadedAtImport(metafiles.get(entry), bundle),
        codeBytes: code.reduce((sum, f) => sum + statSync(join(dir, f)).size, 0),
        dir,
        zip,
      });
    }
  }
  return built;
}

/**
 * The bytes of code a cold import of `bundle` loads: the bundle and, with code splitting, the chunks
 * it imports statically (transitively); chunks imported dynamically load at their first use.
 */
function loadedAtImport(metafile, bundle) {
  const outputs = new Map(
    Object.entries(metafile.outputs).map(([path, output]) => [join(process.cwd(), path), output]),
  );
  const seen = new Set();
  const visit = (path) => {
    if (seen.has(path)) return;
    seen.add(path);
    for (const imported of outputs.get(path)?.imports ?? [])
      if (imported.kind === "import-statement" && !imported.external) visit(join(process.cwd(), imported.path));
  };
  visit(bundle);
  return [...seen].reduce((sum, path) => sum + statSync(path).size, 0);
}
