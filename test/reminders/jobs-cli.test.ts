import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import PostalMime from "postal-mime";
import { beforeAll, describe, expect, it } from "vitest";
import { addDays } from "@invoicing/core/time";
import { createTestEnv, type TestEnv } from "../support/env";

/**
 * The jobs command line end to end: `npm run jobs -- reminders --now <time>` (the command line itself,
 * in its own process, on the same DynamoDB) at successive times sends each reminder once, as an
 * .eml file under <DATA_DIR>/outbox/.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

let env: TestEnv;
let dataDir: string;

beforeAll(async () => {
  env = await createTestEnv();
  dataDir = mkdtempSync(join(tmpdir(), "invoicing-cli-"));
});

async function jobsCli(now: string): Promise<Record<string, unknown>> {
  const { stdout } = await run(
    process.execPath,
    ["--import", "tsx", "packages/local/src/jobs-cli.ts", "reminders", "--now", now],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DYNAMODB_ENDPOINT: env.endpoint,
        TABLE_NAME: env.tableName,
        DATA_DIR: dataDir,
        PUBLIC_BASE_URL: "https://invoices.example.com",
      },
      timeout: 120_000,
    },
  );
  const lines = stdout.trim().split("\n");
  return JSON.parse(lines[lines.length - 1]!) as Record<string, unknown>;
}

describe("npm run jobs -- reminders --now", () => {
  it("sends each due reminder once across successive runs", async () => {
    const user = await env.user();
    const clientId = (await user.call("POST", "/clients", { name: "Stark", email: "ap@stark.test" })).body.id;
    const due = "2026-12-20T00:00:00.000Z";
    const created = await user.call("POST", "/invoices", {
      clientId,
      dueDate: due,
      lineItems: [{ description: "Armor", unitPrice: "999.99" }],
    });
    await user.call("POST", `/invoices/${created.body.id}/finalize`);
    const invoice = (await user.call("POST", `/invoices/${created.body.id}/send`)).body;
    await env.drainStream(); // the invoice email itself: delivered by the stream subscriber, not by the job

    expect(await jobsCli(addDays(due, -3))).toMatchObject({
      job: "reminders",
      now: addDays(due, -3),
      changed: 1,
      sent: 1,
    });
    expect(await jobsCli(addDays(due, -3))).toMatchObject({ changed: 0, sent: 0 });
    expect(await jobsCli(addDays(due, 31))).toMatchObject({ changed: 4, sent: 4 });

    const outbox = join(dataDir, "outbox");
    const files = readdirSync(outbox)
      .filter((f) => f.endsWith(".eml"))
      .sort();
    expect(files).toHaveLength(5);
    const mails = await Promise.all(files.map((f) => PostalMime.parse(readFileSync(join(outbox, f), "utf8"))));
    for (const mail of mails) {
      expect(mail.to?.[0]?.address).toBe("ap@stark.test");
      expect(mail.text).toContain(`https://invoices.example.com/public/invoices/${invoice.publicToken}`);
      expect(mail.text).toContain("Amount due: USD 999.99");
    }
    const listed = (await user.call("GET", `/invoices/${invoice.id}/reminders`)).body;
    expect(listed.map((r: { status: string }) => r.status)).toEqual(["sent", "sent", "sent", "sent", "sent"]);
  }, 300_000);
});
