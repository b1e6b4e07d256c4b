import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { createTestEnv, request } from "../support/env";

/** Redocly's linter (its recommended rules) over the served document: no errors. */

const require = createRequire(import.meta.url);

async function lint(document: unknown): Promise<{
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; severity: string; message: string }[];
}> {
  const file = join(mkdtempSync(join(tmpdir(), "redocly-")), "openapi.json");
  writeFileSync(file, JSON.stringify(document));
  const bin = require.resolve("@redocly/cli/bin/cli.js");
  const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" };
  // Exit code 1 means "errors found": the JSON on stdout says which, so it is read either way.
  const result = await promisify(execFile)(process.execPath, [bin, "lint", file, "--format=json"], {
    env,
    cwd: tmpdir(),
  }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? "" }));
  return JSON.parse(result.stdout);
}

describe("Redocly lint of /openapi.json", () => {
  it("finds no errors", async () => {
    const env = await createTestEnv();
    const doc = (await request(env.app, "GET", "/openapi.json")).body;
    const report = await lint(doc);
    const errors = report.problems.filter((p) => p.severity === "error").map((p) => `${p.ruleId}: ${p.message}`);
    expect(errors).toEqual([]);
    expect(report.totals.errors).toBe(0);

    // The linter does find errors when there are some: a path parameter the path does not declare.
    const broken = structuredClone(doc);
    broken.paths["/clients/{id}"].get.parameters = [
      { name: "nope", in: "path", required: true, schema: { type: "string" } },
    ];
    expect((await lint(broken)).totals.errors).toBeGreaterThan(0);
  });
});
