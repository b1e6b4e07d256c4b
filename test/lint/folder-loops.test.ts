import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

/**
 * `npm run lint` runs scripts/folder-loops.mjs after Biome: the folders of core and of functions
 * must form layers (issue 41), as the files must form no cycle. The script is run here on fixtures
 * and on copies of the real packages, all in a temporary directory (nothing is written into the
 * source tree), and each loop it must refuse is shown next to the same imports pointing one way.
 */
const root = join(import.meta.dirname, "..", "..");
const script = join(root, "scripts", "folder-loops.mjs");
const scratch = mkdtempSync(join(tmpdir(), "folder-loops-"));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let fixtures = 0;
/** A src/ dir of the given files (path → text) in the scratch directory. */
function fixture(files: Record<string, string>): string {
  const src = join(scratch, `fixture-${++fixtures}`, "src");
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(src, path)), { recursive: true });
    writeFileSync(join(src, path), text);
  }
  return src;
}

function check(...srcs: string[]) {
  const out = spawnSync(process.execPath, [script, ...srcs], { cwd: root, encoding: "utf8" });
  return { status: out.status, output: `${out.stdout}${out.stderr}` };
}

describe("scripts/folder-loops.mjs", () => {
  it("refuses two folders importing each other, naming both imports", () => {
    const src = fixture({
      "invoices/send.ts": `import { reminderWrites } from "../reminders/schedule";\nexport const send = () => reminderWrites();\n`,
      "reminders/schedule.ts": `export const reminderWrites = () => [];\n`,
      "reminders/job.ts": `import { send } from "../invoices/send";\nexport const job = () => send();\n`,
    });
    const { status, output } = check(src);
    expect(status).toBe(1);
    expect(output).toContain("folder loop among invoices, reminders");
    expect(output).toContain("invoices → reminders → invoices");
    expect(output).toContain("invoices/send.ts imports reminders/schedule.ts");
    expect(output).toContain("reminders/job.ts imports invoices/send.ts");
  });

  it("allows the same folders when the imports point one way", () => {
    const src = fixture({
      "invoices/send.ts": `import { reminderWrites } from "../reminders/schedule";\nexport const send = () => reminderWrites();\n`,
      "reminders/schedule.ts": `export const reminderWrites = () => [];\n`,
      "jobs/reminders.ts": `import { send } from "../invoices/send";\nexport const job = () => send();\n`,
    });
    expect(check(src)).toEqual({ status: 0, output: "" });
  });

  it("refuses a loop closed by a type-only import, and a loop through three folders", () => {
    const src = fixture({
      "a/one.ts": `import { two } from "../b/two";\nexport const one = () => two();\n`,
      "b/two.ts": `import { three } from "../c/three";\nexport const two = () => three();\n`,
      "c/three.ts": `import type { One } from "../a/types";\nexport const three = (x?: One) => x;\n`,
      "a/types.ts": `export type One = { one: true };\n`,
    });
    const { status, output } = check(src);
    expect(status).toBe(1);
    expect(output).toContain("folder loop among a, b, c");
    expect(output).toContain("c/three.ts imports a/types.ts (types only)");
  });

  it("reads re-exports, dynamic imports and import(…) types, and a file in src/ is a node of its own", () => {
    const src = fixture({
      "context.ts": `export type { Mail } from "./email/transport";\nexport interface Deps { db: string }\n`,
      "email/transport.ts": `export interface Mail { to: string }\n`,
      "email/outbox.ts": `export const queue = (deps: import("../context").Deps) => deps.db;\n`,
      "pdf/lazy.ts": `export const load = () => import("../routes/pdf");\n`,
      "routes/pdf.ts": `import { load } from "../pdf/lazy";\nexport const route = load;\n`,
    });
    const { status, output } = check(src);
    expect(status).toBe(1);
    expect(output).toContain("folder loop among context.ts, email");
    expect(output).toContain("email/outbox.ts imports context.ts (types only)");
    expect(output).toContain("folder loop among pdf, routes");
    expect(output).toContain("pdf/lazy.ts imports routes/pdf.ts");
  });

  it("counts a nested folder as its top folder, and ignores imports of other packages", () => {
    const src = fixture({
      "routes/public/view.ts": `import { app } from "../../app/app";\nimport { x } from "@invoicing/core/app/app";\nexport const view = [app, x];\n`,
      "app/app.ts": `import { view } from "../routes/public/view";\nexport const app = view;\n`,
    });
    const { status, output } = check(src);
    expect(status).toBe(1);
    expect(output).toContain("routes/public/view.ts imports app/app.ts");
  });

  it.each([
    ["core", "packages/core/src", "email/outbox.ts", `import { invoiceEmail } from "../invoices/emails";\n`],
    [
      "functions",
      "packages/functions/src",
      "schemas/common.ts",
      `import { problemResponse } from "../http/problems";\n`,
    ],
  ])("passes on %s as it is, and fails on a copy given one import back up a layer", (_, dir, file, line) => {
    expect(check(join(root, dir))).toEqual({ status: 0, output: "" });
    const copy = join(scratch, `copy-${dir.replaceAll("/", "-")}`, "src");
    cpSync(join(root, dir), copy, { recursive: true });
    writeFileSync(join(copy, file), line + readFileSync(join(copy, file), "utf8"));
    const { status, output } = check(copy);
    expect(status).toBe(1);
    expect(output).toContain("folder loop among");
  });
});
