import { existsSync, mkdirSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { serve, type ServerType } from "@hono/node-server";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IN_CI, skipNotice } from "../support/ci";
import { createTestEnv, type TestEnv } from "../support/env";

/**
 * GET /docs in a real browser: the app served over HTTP on 127.0.0.1, headless Chromium opens the
 * page, the renderer draws every operation of /openapi.json, and the browser asks no other host
 * for anything (the page works offline). A screenshot lands in test-artifacts/docs.png.
 *
 * Chromium comes from Debian (scripts/ensure-chromium.sh); without it this file is skipped, loudly,
 * except under CI, where a missing browser fails it.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) {
  const reason = `no Chromium at ${CHROMIUM} (run scripts/ensure-chromium.sh)`;
  // CI installs Chromium (.ci/run): there a missing browser is a failure, never a skip.
  if (IN_CI) throw new Error(`the /docs browser test must run in CI: ${reason}`);
  skipNotice("the /docs browser test (test/browser/docs.test.ts)", reason);
}

const ARTIFACTS = fileURLToPath(new URL("../../test-artifacts/", import.meta.url));

let env: TestEnv;
let server: ServerType | undefined;
let baseUrl: string;
let browser: Browser | undefined;

beforeAll(async () => {
  if (!hasChromium) return;
  env = await createTestEnv();
  server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: env.app.fetch, hostname: "127.0.0.1", port: 0 }, () => resolve(s));
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
});

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
});

describe.skipIf(!hasChromium)("GET /docs in Chromium", () => {
  it("renders every documented operation from the API itself, with no request to any other host", async () => {
    const doc = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const operationCount = Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0);

    const page = await browser!.newPage({ viewport: { width: 1400, height: 1000 } });
    const foreign: string[] = [];
    const failed: string[] = [];
    page.on("request", (req) => {
      const url = req.url();
      if (!url.startsWith(baseUrl) && !url.startsWith("data:") && !url.startsWith("blob:")) foreign.push(url);
    });
    page.on("requestfailed", (req) => failed.push(`${req.url()} ${req.failure()?.errorText}`));
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));

    const res = await page.goto(`${baseUrl}/docs`);
    expect(res?.status()).toBe(200);
    await page.waitForSelector("body[data-rendered=true]", { timeout: 60_000 });
    await page.waitForSelector(".opblock", { timeout: 60_000 });

    expect(await page.locator(".opblock").count()).toBe(operationCount);
    expect(await page.locator(".info .title").innerText()).toContain("Invoicing API");
    expect(await page.locator("#problem-types tr[id^=problem-]").count()).toBeGreaterThan(20);
    expect(foreign, "requests to other hosts").toEqual([]);
    expect(failed).toEqual([]);
    expect(errors).toEqual([]);

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: `${ARTIFACTS}docs.png` });
    // One operation opened, to show a schema as rendered.
    await page.locator("#operations-Invoices-createInvoice .opblock-summary").click();
    await page.waitForSelector("#operations-Invoices-createInvoice .opblock-body");
    await page.locator("#operations-Invoices-createInvoice").scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${ARTIFACTS}docs-operation.png` });
    await page.close();
  });

  it("takes a problem type's link (the `type` of every problem+json) to its explanation", async () => {
    const page = await browser!.newPage({ viewport: { width: 1400, height: 900 } });
    const problem = (await (await fetch(`${baseUrl}/invoices/1`)).json()) as { type: string; code: string };
    expect(problem.code).toBe("unauthorized");
    const type = new URL(problem.type);
    await page.goto(`${baseUrl}${type.pathname}${type.hash}`);
    await page.waitForSelector("body[data-rendered=true]", { timeout: 60_000 });
    const row = page.locator(`#problem-${problem.code}`);
    expect(await row.innerText()).toContain("401");
    expect(await row.isVisible()).toBe(true);
    await page.close();
  });
});
