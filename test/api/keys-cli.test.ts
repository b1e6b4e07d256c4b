import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { listApiKeys } from "@invoicing/core/keys/api-keys";
import { createTestEnv, expectProblem, request, type TestEnv } from "../support/env";

/**
 * The keys command line with a scope and an expiry (issue 29): `npm run keys -- create --user u
 * --scope read_only --expires-at <time>`, in its own process on the same DynamoDB; the key it
 * prints reads and is refused a change; a bad scope or a past expiry makes no key (exit 2).
 */
const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

let env: TestEnv;

beforeAll(async () => {
  env = await createTestEnv();
});

function keysCli(...args: string[]) {
  return run(process.execPath, ["--import", "tsx", "packages/local/src/keys-cli.ts", "create", ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      DYNAMODB_ENDPOINT: env.endpoint,
      TABLE_NAME: env.tableName,
      DATA_DIR: mkdtempSync(join(tmpdir(), "invoicing-keys-")),
    },
    timeout: 120_000,
  });
}

describe("npm run keys -- create --scope --expires-at", () => {
  it("makes a read-only key that expires; GET /api-keys shows both", async () => {
    const { stdout, stderr } = await keysCli(
      "--user",
      "cli-reader",
      "--scope",
      "read_only",
      "--expires-at",
      "2099-01-01",
    );
    const key = stdout.trim().split("\n").pop()!;
    expect(key).toMatch(/^inv_cli-reader_[A-Za-z0-9_-]{43}$/);
    expect(stderr).toContain("read_only, expires 2099-01-01T00:00:00.000Z");
    const auth = { Authorization: `Bearer ${key}` };
    const listed = await request(env.app, "GET", "/api-keys", undefined, auth);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([
      expect.objectContaining({ scope: "read_only", expiresAt: "2099-01-01T00:00:00.000Z" }),
    ]);
    expectProblem(await request(env.app, "POST", "/clients", { name: "x" }, auth), 403, "insufficient_scope");
  });

  it("refuses an unknown scope and an expiry that is not in the future, making no key", async () => {
    for (const args of [
      ["--scope", "admin"],
      ["--expires-at", "2020-01-01"],
      ["--expires-at", "soon"],
    ]) {
      const failed = await keysCli("--user", "cli-refused", ...args).then(
        () => undefined,
        (error: { code: number; stderr: string }) => error,
      );
      expect(failed?.code, args.join(" ")).toBe(2);
    }
    expect(await listApiKeys(env.deps.db, "cli-refused")).toEqual([]);
  });
});
