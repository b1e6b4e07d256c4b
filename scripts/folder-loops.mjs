#!/usr/bin/env node
/**
 * Folder loops (issue 41). Biome's noImportCycles refuses a cycle between files; this refuses one
 * between folders: if `invoices/` imports `reminders/`, nothing under `reminders/` may import
 * `invoices/` back, directly or through other folders, so the folders of a package form layers
 * whose imports all point one way. Type-only imports count too: a layer that needs a type from
 * the layer above is not below it.
 *
 * A "folder" is the first path segment under a package's src/ (`invoices/lifecycle.ts` is in
 * `invoices`, `routes/public/view.ts` in `routes`); a file directly in src/ is a node of its own
 * (`deps.ts`). Imports are read with TypeScript's own parser: `import … from`, `export … from`,
 * `import x = require(…)`, `import("…")` and `import("…").Type`; only relative specifiers inside
 * the same src/ are edges (the packages' layering is biome.jsonc's).
 *
 *   node scripts/folder-loops.mjs [src dir …]   (default: packages/core/src packages/functions/src)
 *
 * Prints each loop it finds, with one import per step, and exits 1; prints nothing and exits 0
 * when there is none. `npm run lint` runs it; test/lint/folder-loops.test.ts shows it failing.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const EXTENSIONS = [".ts", ".tsx", ".mts"];

function sourceFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (EXTENSIONS.some((ext) => name.endsWith(ext)) && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** The module specifiers a file imports, each with whether only types come through it. */
function importsOf(path) {
  const text = readFileSync(path, "utf8");
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TSX);
  const found = [];
  const visit = (node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings : undefined;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined && named !== undefined && named.elements.every((e) => e.isTypeOnly)));
      found.push({ specifier: node.moduleSpecifier.text, typeOnly });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      found.push({ specifier: node.moduleReference.expression.text, typeOnly: node.isTypeOnly });
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push({ specifier: node.arguments[0].text, typeOnly: false });
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      found.push({ specifier: node.argument.literal.text, typeOnly: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** The file a relative specifier names, or undefined when it names none (or is not relative). */
function resolveSpecifier(from, specifier) {
  if (!specifier.startsWith(".")) return undefined;
  const base = resolve(dirname(from), specifier.replace(/\.(m?js|tsx?)$/, ""));
  for (const candidate of [
    ...EXTENSIONS.map((ext) => base + ext),
    ...EXTENSIONS.map((ext) => join(base, "index" + ext)),
  ]) {
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

const folderOf = (src, path) => relative(src, path).split(sep)[0];

/**
 * The folder graph of one src/ dir: folder → folder → the imports that make the edge
 * ({ from, to, typeOnly }, paths relative to src).
 */
export function folderGraph(src) {
  const graph = new Map();
  for (const path of sourceFiles(src)) {
    const from = folderOf(src, path);
    if (!graph.has(from)) graph.set(from, new Map());
    for (const { specifier, typeOnly } of importsOf(path)) {
      const target = resolveSpecifier(path, specifier);
      if (!target || relative(src, target).startsWith("..")) continue;
      const to = folderOf(src, target);
      if (to === from) continue;
      const edges = graph.get(from);
      if (!edges.has(to)) edges.set(to, []);
      edges.get(to).push({ from: relative(src, path), to: relative(src, target), typeOnly });
    }
  }
  return graph;
}

/** Strongly connected components of more than one folder (Tarjan), each sorted. */
function loopsOf(graph) {
  let index = 0;
  const indices = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const components = [];
  const connect = (v) => {
    indices.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!indices.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), indices.get(w)));
    }
    if (low.get(v) === indices.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!indices.has(v)) connect(v);
  return components;
}

/** One shortest cycle through `start` inside `members` (breadth first), as a list of folders. */
function cycleThrough(graph, start, members) {
  const previous = new Map([[start, undefined]]);
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift();
    for (const w of [...(graph.get(v)?.keys() ?? [])].sort()) {
      if (!members.has(w)) continue;
      if (w === start) {
        const path = [v];
        while (previous.get(path[0]) !== undefined) path.unshift(previous.get(path[0]));
        return [...path, start];
      }
      if (!previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

/**
 * The folder loops of one src/ dir: each is { folders, cycle, steps } where `cycle` is one loop
 * through its first folder and `steps` one import for each of the cycle's edges.
 */
export function folderLoops(src) {
  const graph = folderGraph(src);
  return loopsOf(graph).map((folders) => {
    const cycle = cycleThrough(graph, folders[0], new Set(folders));
    const steps = cycle.slice(1).map((to, i) => {
      const edges = graph.get(cycle[i]).get(to);
      return edges.find((e) => !e.typeOnly) ?? edges[0];
    });
    return { folders, cycle, steps };
  });
}

export function describeLoops(src, loops) {
  const lines = [];
  for (const { folders, cycle, steps } of loops) {
    lines.push(`${src}: folder loop among ${folders.join(", ")}`);
    lines.push(`  for example ${cycle.join(" → ")}:`);
    for (const step of steps) lines.push(`    ${step.from} imports ${step.to}${step.typeOnly ? " (types only)" : ""}`);
  }
  return lines.join("\n");
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = join(dirname(fileURLToPath(import.meta.url)), "..");
  const dirs = process.argv.slice(2);
  const srcs = dirs.length > 0 ? dirs : ["packages/core/src", "packages/functions/src"];
  let failed = false;
  for (const src of srcs) {
    const loops = folderLoops(resolve(root, src));
    if (loops.length === 0) continue;
    failed = true;
    console.error(describeLoops(src, loops));
  }
  if (failed) {
    console.error("Folder loops: make the imports between these folders point one way (scripts/folder-loops.mjs).");
    process.exit(1);
  }
}
