import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The docs' pointers resolve: every relative Markdown link of README.md and docs/*.md, and every
 * file path they name in code spans (`packages/functions/src/http/body.ts`, `functions/src/…`,
 * `core/src/…`, `docs/….md`, `infra/….ts`, …), is a file of the repository. A moved or deleted file
 * whose docs still point at it fails here (docs/profile.md and routes/public.tsx were such pointers).
 */
const root = join(import.meta.dirname, "..", "..");
const docs = [
  "README.md",
  ...readdirSync(join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

/** Where a path written in the docs is, relative to the root: `functions/src/x` is the package's. */
function resolve(path: string): string {
  const bare = path.replace(/[#?].*$/, "");
  for (const pkg of ["core", "functions", "local"]) {
    if (bare.startsWith(`${pkg}/src/`) || bare.startsWith(`${pkg}/test/`)) return `packages/${bare}`;
  }
  return bare;
}

const ROOTS = /^(?:packages|functions|core|local|docs|infra|test|bench|scripts)\//;
/** Written by a command, not kept in the repository. */
const GENERATED = new Set(["bench/results.json"]);
const FILE = /\.(?:ts|tsx|mjs|mts|md|json|jsonc|sh)$/;

function pointers(doc: string): string[] {
  const text = readFileSync(join(root, doc), "utf8");
  const found = new Set<string>();
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (!/^(?:[a-z]+:|#)/.test(target!)) found.add(join(doc, "..", target!).replace(/^\.\//, ""));
  }
  for (const [, span] of text.matchAll(/`([^`\s]+)`/g)) {
    // A pattern (`schemas/*.ts`, `core/src/<kind>/resource.ts`) names no one file.
    if (ROOTS.test(span!) && FILE.test(span!.replace(/[#?].*$/, "")) && !/[*<{]/.test(span!)) found.add(span!);
  }
  return [...found];
}

describe("the docs' pointers", () => {
  it.each(docs)("%s: every linked or named file exists", (doc) => {
    const missing = pointers(doc).filter(
      (p) => !p.startsWith("../shared/") && !GENERATED.has(p) && !existsSync(join(root, resolve(p))),
    );
    expect(missing).toEqual([]);
  });

  it("are found at all (the patterns match the docs' way of writing paths)", () => {
    const all = docs.flatMap(pointers);
    expect(all).toContain("docs/documents.md");
    expect(all).toContain("packages/functions/src/http/middleware.ts");
    expect(all.length).toBeGreaterThan(40);
  });
});
