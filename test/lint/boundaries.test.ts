import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * `npm run lint` (biome check) enforces the layers (biome.jsonc): core ↛ functions, core ↛ local,
 * functions ↛ local, infra ↛ local, and no import cycle anywhere. Each rule is shown to fail on a
 * probe file that breaks it and to pass on a probe that keeps it (so a rule that matched
 * everything, or nothing, fails here too). The rules are configured per folder, so the probes are
 * written at the real folders' paths, in a temporary directory beside a copy of biome.jsonc (issue
 * 43: a killed run leaves nothing in the source tree), and checked there in one run.
 */
const root = join(import.meta.dirname, "..", "..");
const copy = mkdtempSync(join(tmpdir(), "lint-boundaries-"));
const probe = "lint-probe";

const importing = (name: string, from: string) =>
  `import { ${name} } from "${from}";\n\nexport const probe = ${name};\n`;

const probes: Record<string, string> = {
  // forbidden
  [`packages/core/src/${probe}/to-functions.ts`]: importing("HttpProblem", "@invoicing/functions/http/problems"),
  [`packages/core/src/${probe}/to-functions-relative.ts`]: importing(
    "HttpProblem",
    "../../../functions/src/http/problems",
  ),
  [`packages/core/src/${probe}/to-local.ts`]: importing("dataDir", "@invoicing/local/paths"),
  [`packages/functions/src/${probe}/to-local.ts`]: importing("dataDir", "@invoicing/local/paths"),
  [`infra/${probe}-to-local.ts`]: importing("dataDir", "../packages/local/src/paths"),
  // allowed
  [`packages/core/src/${probe}/to-core.ts`]: importing("DomainError", "../errors"),
  [`packages/functions/src/${probe}/to-core.ts`]: importing("DomainError", "@invoicing/core/errors"),
  [`infra/${probe}-to-functions.ts`]: importing("EMBEDDED_FONT_PACKAGE", "../packages/functions/src/pdf/font-files"),
  // cycles, and the same modules importing one way
  [`packages/core/src/${probe}/cycle-a.ts`]: `import { b } from "./cycle-b";\n\nexport const a = () => b;\n`,
  [`packages/core/src/${probe}/cycle-b.ts`]: `import { a } from "./cycle-a";\n\nexport const b = () => a;\n`,
  [`packages/functions/src/${probe}/type-a.ts`]: `import type { B } from "./type-b";\n\nexport type A = { b?: B };\n`,
  [`packages/functions/src/${probe}/type-b.ts`]: `import type { A } from "./type-a";\n\nexport type B = { a?: A };\n`,
  [`packages/core/src/${probe}/line-a.ts`]: `import { b } from "./line-b";\n\nexport const a = () => b;\n`,
  [`packages/core/src/${probe}/line-b.ts`]: `export const b = () => 1;\n`,
};

/** Each probe's findings: the rules `npm run lint` reports on it. */
const findings = new Map<string, string[]>();
let status: number | null = null;

beforeAll(() => {
  copyFileSync(join(root, "biome.jsonc"), join(copy, "biome.jsonc"));
  for (const [path, text] of Object.entries(probes)) {
    mkdirSync(dirname(join(copy, path)), { recursive: true });
    writeFileSync(join(copy, path), text);
  }
  // The copy is no git repository: the VCS integration (.gitignore) is off there.
  const out = spawnSync(
    join(root, "node_modules", ".bin", "biome"),
    ["check", "--colors=off", "--max-diagnostics=none", "--vcs-enabled=false", ...Object.keys(probes)],
    { cwd: copy, encoding: "utf8" },
  );
  status = out.status;
  for (const [, path, rule] of `${out.stdout}${out.stderr}`.matchAll(/^(\S+):\d+:\d+ (lint\/\w+\/\w+)/gm)) {
    findings.set(path!, [...(findings.get(path!) ?? []), rule!]);
  }
});

afterAll(() => {
  rmSync(copy, { recursive: true, force: true });
});

describe("npm run lint", () => {
  it("fails when a probe breaks a rule", () => {
    expect(status).toBe(1);
  });

  it.each([
    ["core → functions", `packages/core/src/${probe}/to-functions.ts`],
    ["core → functions, by a relative path", `packages/core/src/${probe}/to-functions-relative.ts`],
    ["core → local", `packages/core/src/${probe}/to-local.ts`],
    ["functions → local", `packages/functions/src/${probe}/to-local.ts`],
    ["infra → local", `infra/${probe}-to-local.ts`],
  ])("refuses %s", (_, path) => {
    expect(findings.get(path)).toEqual(["lint/style/noRestrictedImports"]);
  });

  it.each([
    ["core → core", `packages/core/src/${probe}/to-core.ts`],
    ["functions → core", `packages/functions/src/${probe}/to-core.ts`],
    ["infra → functions", `infra/${probe}-to-functions.ts`],
    ["a module importing one way", `packages/core/src/${probe}/line-a.ts`],
    ["the module it imports", `packages/core/src/${probe}/line-b.ts`],
  ])("allows %s", (_, path) => {
    expect(findings.get(path)).toBeUndefined();
  });

  it("refuses an import cycle, on both of its modules", () => {
    expect(findings.get(`packages/core/src/${probe}/cycle-a.ts`)).toEqual(["lint/suspicious/noImportCycles"]);
    expect(findings.get(`packages/core/src/${probe}/cycle-b.ts`)).toEqual(["lint/suspicious/noImportCycles"]);
  });

  it("refuses a cycle closed by type-only imports (the layers hold for types too)", () => {
    expect(findings.get(`packages/functions/src/${probe}/type-a.ts`)).toEqual(["lint/suspicious/noImportCycles"]);
    expect(findings.get(`packages/functions/src/${probe}/type-b.ts`)).toEqual(["lint/suspicious/noImportCycles"]);
  });
});
