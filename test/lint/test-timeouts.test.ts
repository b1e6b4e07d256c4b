import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * A timeout catches a hang; it never measures speed (vitest.config.ts: 180 s per test, 300 s per
 * hook, so that a loaded two-core machine still passes). A test or a file that sets a lower limit
 * turns a slow machine into a failure (issue 43 found four such limits after a round that said they
 * were gone, and three files setting 120 s for all their tests). This reads every test file with
 * TypeScript's parser and lists each limit below the default: the last argument of it/test/describe
 * and of the hooks (a number, or `{ timeout }`), and vi.setConfig's testTimeout/hookTimeout. A limit
 * that is an expression (`180_000 + RUNS * 6_000`) counts by its literal terms, so a sum that starts
 * at the default passes.
 */
const root = join(import.meta.dirname, "..", "..");
const TEST_DEFAULT = 180_000;
const HOOK_DEFAULT = 300_000;
const TESTS = new Set(["it", "test", "describe"]);
const HOOKS = new Set(["beforeAll", "afterAll", "beforeEach", "afterEach"]);

function testFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name === "node_modules") continue;
    if (statSync(path).isDirectory()) out.push(...testFiles(path));
    else if (name.endsWith(".ts")) out.push(path);
  }
  return out;
}

/** A limit's value when its literal part alone can say it: a number, or a sum of terms one of which is. */
function lowerBound(node: ts.Expression): number | undefined {
  if (ts.isNumericLiteral(node)) return Number(node.text.replaceAll("_", ""));
  if (ts.isParenthesizedExpression(node)) return lowerBound(node.expression);
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const [left, right] = [lowerBound(node.left), lowerBound(node.right)];
    if (left === undefined && right === undefined) return undefined;
    return Math.max(left ?? 0, right ?? 0);
  }
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.AsteriskToken) {
    const [left, right] = [lowerBound(node.left), lowerBound(node.right)];
    return left !== undefined && right !== undefined ? left * right : undefined;
  }
  return undefined;
}

/** The base name of a call's callee: `it`, `it.each(…)`, `describe.concurrent`, `vi.setConfig`. */
function calleeName(callee: ts.Expression): string {
  if (ts.isIdentifier(callee)) return callee.text;
  if (ts.isCallExpression(callee)) return calleeName(callee.expression);
  if (ts.isPropertyAccessExpression(callee)) {
    const base = calleeName(callee.expression);
    return base === "vi" ? `vi.${callee.name.text}` : base;
  }
  return "";
}

function property(object: ts.ObjectLiteralExpression, name: string): ts.Expression | undefined {
  for (const p of object.properties)
    if (ts.isPropertyAssignment(p) && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) && p.name.text === name)
      return p.initializer;
  return undefined;
}

/** Each limit below the default in a file: "file:line name limit". */
function limitsBelowDefault(path: string, text = readFileSync(path, "utf8")): string[] {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: string[] = [];
  const report = (node: ts.Node, what: string, limit: number | undefined, floor: number) => {
    if (limit === undefined || limit >= floor) return;
    const line = file.getLineAndCharacterOfPosition(node.getStart()).line + 1;
    found.push(`${relative(root, path)}:${line} ${what} ${limit}`);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const name = calleeName(node.expression);
      const last = node.arguments.at(-1);
      if ((TESTS.has(name) || HOOKS.has(name)) && last && node.arguments.length >= 2) {
        const floor = HOOKS.has(name) ? HOOK_DEFAULT : TEST_DEFAULT;
        const limit = ts.isObjectLiteralExpression(last) ? property(last, "timeout") : last;
        if (limit && !ts.isFunctionLike(limit)) report(node, name, lowerBound(limit), floor);
      }
      const options = node.arguments[0];
      if (name === "vi.setConfig" && options && ts.isObjectLiteralExpression(options)) {
        const testTimeout = property(options, "testTimeout");
        const hookTimeout = property(options, "hookTimeout");
        if (testTimeout) report(node, "testTimeout", lowerBound(testTimeout), TEST_DEFAULT);
        if (hookTimeout) report(node, "hookTimeout", lowerBound(hookTimeout), HOOK_DEFAULT);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe("per-test limits", () => {
  it("none below the suite's default in any test file", () => {
    const packages = readdirSync(join(root, "packages")).map((p) => join(root, "packages", p, "test"));
    const dirs = [join(root, "test"), ...packages.filter((dir) => statSync(dir, { throwIfNoEntry: false }))];
    expect(dirs.flatMap(testFiles).flatMap((path) => limitsBelowDefault(path))).toEqual([]);
  });

  it("finds each form of a lower limit, and passes the default and sums that start at it", () => {
    const probe = join(root, "test", "probe.test.ts");
    const text = [
      'it("a", async () => {}, 60_000);', // 1
      'test.each([1])("b %s", async () => {}, { timeout: 30_000 });', // 2
      'describe("c", () => {}, 90_000);', // 3
      "beforeAll(async () => {}, 200_000);", // 4
      "vi.setConfig({ testTimeout: 120_000 });", // 5
      'it("d", async () => {}, 60_000 + RUNS * 6_000);', // 6
      'it("e", async () => {}, 180_000);',
      'it("f", async () => {}, 180_000 + RUNS * 6_000);',
      'it("g", async () => {}, { timeout: 600_000 });',
      "beforeAll(async () => {}, 300_000);",
      "vi.setConfig({ testTimeout: 240_000 });",
      'it("h", async () => {});',
      'spawnSync("x", [], { timeout: 1_000 });',
    ].join("\n");
    expect(limitsBelowDefault(probe, text)).toEqual([
      "test/probe.test.ts:1 it 60000",
      "test/probe.test.ts:2 test 30000",
      "test/probe.test.ts:3 describe 90000",
      "test/probe.test.ts:4 beforeAll 200000",
      "test/probe.test.ts:5 testTimeout 120000",
      "test/probe.test.ts:6 it 60000",
    ]);
  });
});
