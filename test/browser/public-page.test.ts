import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { serve, type ServerType } from "@hono/node-server";
import { chromium, type BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "@invoicing/local/dynamo";
import { IN_CI, skipNotice } from "../support/ci";
import { createTestEnv, type TestEnv, type TestUser } from "../support/env";
import { LINES, sellerWithBuyer } from "../support/documents";
import { startStripeCardProcessor, type FakeStripe } from "../support/fake-stripe";

/**
 * The public invoice page as a person sees it: served over real HTTP by @hono/node-server, opened
 * in headless Chromium (Debian's `chromium`, driven by playwright-core), checked for what is on the
 * screen, and photographed into test-artifacts/. Chromium is found, or installed by
 * scripts/ensure-chromium.sh (apt-get, as root); the test is skipped — loudly — only where it truly
 * cannot be had, and never under CI, where a missing browser is a failure.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const ARTIFACTS = join(ROOT, "test-artifacts");

function findChromium(): string | undefined {
  const found = spawnSync("bash", [join(ROOT, "scripts/ensure-chromium.sh")], {
    encoding: "utf8",
    timeout: 15 * 60_000,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const path = found.stdout?.trim().split("\n").pop();
  return found.status === 0 && path && existsSync(path) ? path : undefined;
}

const chromiumPath = findChromium();
if (!chromiumPath) {
  const message =
    "Chromium is not available on this machine and cannot be installed here (see scripts/ensure-chromium.sh)";
  if (IN_CI) throw new Error(`${message}: the browser test must run in CI`);
  skipNotice("the browser test of the public invoice page", message);
}

const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

describe.skipIf(!chromiumPath)("the public invoice page in Chromium", () => {
  let env: TestEnv;
  let server: ServerType;
  let baseUrl: string;
  let browser: BrowserContext;
  let profile: string;
  // A second service with a card processor: the local stand-in for Stripe's API and hosted checkout.
  let fake: FakeStripe;
  let cardEnv: TestEnv;
  let cardServer: ServerType;
  let cardBaseUrl: string;

  const listen = async (server: ServerType) => {
    await new Promise<void>((ok) => (server.listening ? ok() : server.once("listening", () => ok())));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };

  beforeAll(async () => {
    env = await createTestEnv();
    server = serve({ fetch: env.app.fetch, port: 0, hostname: "127.0.0.1" });
    baseUrl = await listen(server);
    const stripe = await startStripeCardProcessor({ secretKey: "sk_test_browser", webhookSecret: "whsec_browser" });
    fake = stripe.fake;
    // The pay link is absolute (the service's public base URL): the port is chosen first.
    const cardPort = await freePort();
    cardEnv = await createTestEnv({
      extraDeps: { payments: stripe.payments, cardPayments: true, publicBaseUrl: `http://127.0.0.1:${cardPort}` },
    });
    fake.now = () => cardEnv.clock.now;
    cardServer = serve({ fetch: cardEnv.app.fetch, port: cardPort, hostname: "127.0.0.1" });
    cardBaseUrl = await listen(cardServer);
    profile = mkdtempSync(join(tmpdir(), "invoicing-chromium-"));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath!,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1000, height: 1200 },
    });
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((ok) => (server ? server.close(() => ok()) : ok()));
    await new Promise<void>((ok) => (cardServer ? cardServer.close(() => ok()) : ok()));
    await fake?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  /** Finalizes and sends the draft, then opens its public page, keeping every error the browser reports. */
  async function sendAndOpen(user: TestUser, draftId: number) {
    await user.call("POST", `/invoices/${draftId}/finalize`);
    const invoice = (await user.call("POST", `/invoices/${draftId}/send`)).body;
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(m.text());
    });
    page.on("pageerror", (e) => problems.push(e.message));
    const response = await page.goto(`${baseUrl}/public/invoices/${invoice.publicToken}`);
    return { invoice, page, problems, response };
  }

  it("shows the number, the total, the status and the pay link (followed in the next test); user text stays text", async () => {
    const user = await env.user();
    const clientId = (
      await user.call("POST", "/clients", {
        name: "Acme <b>Corp</b>",
        email: "billing@acme.test",
        paymentTermsDays: 14,
      })
    ).body.id;
    const created = await user.call("POST", "/invoices", {
      clientId,
      altProcessorPaymentLink: "https://pay.example.test/checkout/42",
      notes: "Thank you! <script>window.__pwned = true</script>",
      lineItems: [
        {
          description: 'Widget <img src=x onerror="window.__pwned=true">',
          quantity: "3",
          unitPrice: "19.99",
          taxRate: "0.0825",
        },
        { description: "Setup", unitPrice: "100.00" },
      ],
    });
    const { invoice, page, problems, response } = await sendAndOpen(user, created.body.id);
    expect(response?.status()).toBe(200);

    await expect.poll(() => page.title()).toBe(`Invoice ${invoice.invoiceNumber}`);
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe(`Invoice ${invoice.invoiceNumber}`);
    expect(await page.getByTestId("status").innerText()).toBe("Sent");
    const totals = await page.getByTestId("totals").innerText();
    expect(totals).toMatch(/Total\s+USD 164\.92/); // 59.97 + 4.95 + 100.00
    expect(totals).toMatch(/Amount due\s+USD 164\.92/);

    const pay = page.getByRole("link", { name: "Pay now" });
    expect(await pay.isVisible()).toBe(true);
    expect(await pay.getAttribute("href")).toBe("https://pay.example.test/checkout/42");
    // Our stylesheet is allowed by the page's CSP (by hash): the button is styled, not a bare link.
    const background = await pay.evaluate((el) => getComputedStyle(el).backgroundColor);
    expect(background).toBe("rgb(36, 83, 214)");

    // Hostile text is on the screen as text, and nothing of it ran.
    const body = await page.locator("body").innerText();
    expect(body).toContain("Acme <b>Corp</b>");
    expect(body).toContain('Widget <img src=x onerror="window.__pwned=true">');
    expect(body).toContain("<script>window.__pwned = true</script>");
    expect(await page.evaluate(() => (window as unknown as { __pwned?: boolean }).__pwned)).toBeUndefined();
    expect(await page.locator("img, script").count()).toBe(0);
    expect(problems, problems.join("\n")).toEqual([]);

    mkdirSync(ARTIFACTS, { recursive: true });
    const shot = join(ARTIFACTS, "public-invoice.png");
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(10_000);
    await page.close();
  });

  it("follows the pay link to the card processor's checkout, for the amount due after a partial payment", async () => {
    const user = await cardEnv.user();
    const clientId = (await user.call("POST", "/clients", { name: "Globex", email: "ap@globex.test" })).body.id;
    const created = await user.call("POST", "/invoices", {
      clientId,
      lineItems: [{ description: "Design", unitPrice: "1264.92" }],
    });
    await user.call("POST", `/invoices/${created.body.id}/finalize`);
    const invoice = (await user.call("POST", `/invoices/${created.body.id}/send`)).body;
    const paid = await user.call("POST", `/invoices/${invoice.id}/payments`, {
      amount: "264.92",
      paymentMethod: "cash",
    });
    expect(paid.status).toBe(201);

    const page = await browser.newPage();
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(e.message));
    const publicUrl = `${cardBaseUrl}/public/invoices/${invoice.publicToken}`;
    expect((await page.goto(publicUrl))?.status()).toBe(200);
    const totals = await page.getByTestId("totals").innerText();
    expect(totals).toMatch(/Amount paid\s+USD 264\.92/);
    expect(totals).toMatch(/Amount due\s+USD 1,000\.00/);
    const pay = page.getByRole("link", { name: "Pay now" });
    expect(await pay.getAttribute("href")).toBe(`${publicUrl}/pay`);

    // The click follows our redirect to the processor's hosted checkout of a session for what is due.
    await Promise.all([page.waitForURL(`${fake.url}/c/pay/**`), pay.click()]);
    expect(await page.getByTestId("amount").innerText()).toBe("USD 100000");
    const sessionId = await page.getByTestId("session").innerText();
    expect(fake.sessions.get(sessionId)).toMatchObject({ amount_total: 100000, status: "open" });
    expect((await user.call("GET", `/invoices/${invoice.id}`)).body.cardProcessorCheckoutSessionId).toBe(sessionId);
    expect(problems, problems.join("\n")).toEqual([]);
    await page.close();
  });

  it("shows a full invoice as a client sees it: logo, seller, a long address, two tax rates, payment instructions", async () => {
    const { user, clientId } = await sellerWithBuyer(env);
    const created = await user.call("POST", "/invoices", {
      clientId,
      currency: "EUR",
      lineItems: LINES,
      buyerReference: "04011000-12345-03",
      purchaseOrderReference: "PO-2026-7781",
      deliveryDate: "2026-11-20",
      notes: "Thank you for the pleasant collaboration.",
      terms: "Payable within 14 days without deduction.",
    });
    const { invoice, page, problems } = await sendAndOpen(user, created.body.id);
    // The logo is drawn (a data: image the page's CSP allows), at its natural aspect ratio.
    const logo = page.getByTestId("logo");
    expect(await logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(360);
    const box = (await logo.boundingBox())!;
    expect(box.width / box.height).toBeCloseTo(3, 1);
    expect(await page.getByTestId("seller").innerText()).toContain("VAT ID: DE123456789");
    const billTo = await page.getByTestId("bill-to").innerText();
    expect(billTo).toContain("Industriestraße 117–121, Gebäude C, Tor 4");
    expect(billTo).toContain("60311 Frankfurt am Main");
    const totals = await page.getByTestId("totals").innerText();
    expect(totals).toMatch(/VAT 19 % on 4,080\.00\s+775\.20/);
    expect(totals).toMatch(/VAT 7 % on 70\.00\s+4\.90/);
    expect(totals).toMatch(/Amount due\s+EUR 4,930\.10/);
    const payment = await page.getByTestId("payment").innerText();
    expect(payment).toMatch(/IBAN\s+DE89 3704 0044 0532 0130 00/);
    expect(payment).toMatch(new RegExp(`Reference\\s+${invoice.invoiceNumber}`));
    // Nothing spills out of the page's column, however long the address lines are.
    const spills = () => {
      const main = document.querySelector("main")!.getBoundingClientRect();
      return [...document.querySelectorAll("main *")].filter((el) => el.getBoundingClientRect().right > main.right + 1)
        .length;
    };
    expect(await page.evaluate(spills)).toBe(0);
    // On a wide screen the rate is in its own column, not repeated under the description.
    expect(await page.locator("tbody tr").first().innerText()).not.toContain("Tax ");
    expect(await page.locator("script").count()).toBe(0);
    expect(problems, problems.join("\n")).toEqual([]);

    mkdirSync(ARTIFACTS, { recursive: true });
    const shot = join(ARTIFACTS, "public-invoice-full.png");
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(30_000);
    await page.setViewportSize({ width: 390, height: 844 });
    // On a phone the tax column is hidden; each line still shows its rate (API.md section 9: the
    // lines' tax rate on the page), and nothing spills out.
    const rows = await page.locator("tbody tr").allInnerTexts();
    expect(rows).toHaveLength(LINES.length);
    for (const row of rows) expect(row).toMatch(/Tax \d+(\.\d+)? %/);
    expect(await page.locator("th", { hasText: "Tax" }).isVisible()).toBe(false);
    expect(await page.evaluate(spills)).toBe(0);
    await page.screenshot({ path: join(ARTIFACTS, "public-invoice-full-phone.png"), fullPage: true });
    await page.close();
  });

  it("shows the 404 problem for an unknown token, no page", async () => {
    const page = await browser.newPage();
    const response = await page.goto(`${baseUrl}/public/invoices/${"Z".repeat(32)}`);
    expect(response?.status()).toBe(404);
    expect(response?.headers()["content-type"]).toMatch(/^application\/problem\+json/);
    await page.close();
  });
});
