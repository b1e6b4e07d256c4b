import { spawnSync } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { createClient } from "@invoicing/core/clients/clients";
import { createDb } from "@invoicing/core/db/dynamodb";
import { createInvoice } from "@invoicing/core/invoices/invoices";
import { finalizeInvoice, sendInvoice } from "@invoicing/core/invoices/lifecycle";
import { inspectImage } from "@invoicing/core/profile/image";
import { updateProfile } from "@invoicing/core/profile/update";
import { ensureTable } from "@invoicing/local/bootstrap";
import { bundleFunctions } from "../scripts/bundle.mjs";
import { evaluateInfra, functionsOf } from "../scripts/infra.mjs";
import { httpApiEvent, lambdaSetup } from "../test/deploy/lambda";
import { startStripeCardProcessor } from "../test/support/fake-stripe";
import { pngDeclaring } from "../test/support/images";
import { createWorld } from "./world";

/**
 * Issue 29's figures: what the abuse paths a security review found cost now.
 * - The logo check of hostile PNGs (inspectImage, the work PUT /profile/logo does after the key):
 *   CPU ms, median of RUNS, beside the largest image allowed.
 * - The pay link: calls to the card processor (the local Stripe stand-in counts them) per 50 opens.
 * - The first Factur-X of a cold Documents function: its bundle, built as SST builds it, imported in
 *   a fresh Node process (Lambda's init), then its first and second Factur-X request against
 *   DynamoDB Local. API.md section 9: under 2 s. Judged on CPU time, as bench/init.ts judges init:
 *   two cores shared with other work make wall time mostly the wait for a core (measured at 5× the
 *   CPU time under load); wall time is shown beside it.
 */
interface LogoRow {
  image: string;
  bytes: number;
  answer: string;
  medianCpuMs: number;
}
interface PayLinkRow {
  opens: number;
  processorCalls: Record<string, number>;
}
interface FacturXRow {
  request: string;
  cpuMs: number;
  wallMs: number;
  goal: string;
  meetsGoal: boolean;
}

const RUNS = 7;

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

export function measureLogo(): LogoRow[] {
  const images: [string, Buffer][] = [
    // The finding: about 249 KB of real image data declaring 16000 × 16000.
    ["hostile: 249 KB declaring 16000 × 16000", pngDeclaring(16000, 16000, deflateSync(randomBytes(249_000)))],
    ["hostile: 65 bytes declaring 2000 × 2000", pngDeclaring(2000, 2000, deflateSync(Buffer.alloc(0)))],
    [
      "hostile: 10 × 10 with 64 MB of data (zip bomb)",
      pngDeclaring(10, 10, deflateSync(Buffer.alloc(64 << 20), { level: 9 })),
    ],
    ["largest allowed: 2000 × 2000 grey", pngDeclaring(2000, 2000, deflateSync(Buffer.alloc(2001 * 2000)))],
  ];
  return images.map(([image, bytes]) => {
    const times: number[] = [];
    let answer = "";
    for (let i = 0; i < RUNS; i++) {
      const start = cpuMs();
      const check = inspectImage(bytes, "image/png", 2000);
      times.push(cpuMs() - start);
      answer = check.ok ? "accepted" : `400: the body ${check.reason}`;
    }
    times.sort((a, b) => a - b);
    return { image, bytes: bytes.length, answer, medianCpuMs: round(times[Math.floor(RUNS / 2)]!) };
  });
}

export async function measurePayLink(endpoint: string): Promise<PayLinkRow> {
  const stripe = await startStripeCardProcessor({ secretKey: "sk_test_bench", webhookSecret: "whsec_bench" });
  try {
    const world = await createWorld(endpoint);
    world.deps.payments = stripe.payments;
    world.deps.cardPayments = true;
    const ctx = { ...world.deps, userId: world.userId };
    const client = await createClient(ctx, { name: "Acme", email: "ap@acme.test" });
    const draft = await createInvoice(ctx, {
      clientId: client.id,
      lineItems: [{ description: "Work", unitPrice: "100.00" }],
    });
    await finalizeInvoice(ctx, draft.id);
    const sent = await sendInvoice(ctx, draft.id, {});
    const before = stripe.fake.requests.length;
    const opens = 50;
    for (let i = 0; i < opens; i++) {
      const res = await world.app.request(`http://localhost/public/invoices/${sent.publicToken}/pay`);
      if (res.status !== 303) throw new Error(`pay link: ${res.status} ${await res.text()}`);
    }
    const processorCalls: Record<string, number> = {};
    for (const r of stripe.fake.requests.slice(before)) {
      const name = `${r.method} ${r.path.replace(/cs_[A-Za-z0-9_]+/, "{id}")}`;
      processorCalls[name] = (processorCalls[name] ?? 0) + 1;
    }
    return { opens, processorCalls };
  } finally {
    await stripe.fake.close();
  }
}

/** Imports a bundle and calls its handler once per event, timing each; prints one JSON line. */
const TIMED_INVOKE = `
const [bundle, exportName, eventsFile] = process.argv.slice(1);
const { readFileSync } = await import("node:fs");
const events = JSON.parse(readFileSync(eventsFile, "utf8"));
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
let c = cpu(), t = performance.now();
const mod = await import(bundle);
const out = [{ request: "init (import of the bundle)", cpuMs: cpu() - c, wallMs: performance.now() - t, status: 0 }];
for (const [i, event] of events.entries()) {
  c = cpu(); t = performance.now();
  const res = await mod[exportName](event, { awsRequestId: "r" + i, getRemainingTimeInMillis: () => 20000 });
  out.push({ request: event.label, cpuMs: cpu() - c, wallMs: performance.now() - t, status: res.statusCode });
}
console.log(JSON.stringify(out));
process.exit(0);
`;

export async function measureFirstFacturX(endpoint: string): Promise<FacturXRow[]> {
  const outdir = mkdtempSync(join(tmpdir(), "bench-facturx-"));
  try {
    const infra = await evaluateInfra({ stage: "bench", env: { EMAIL_SENDER: "bench@example.com" } });
    const fn = functionsOf(infra).find((f) => f.id === "Documents");
    if (!fn) throw new Error("infra declares no Documents function");
    const [built] = await bundleFunctions([fn], outdir);
    const tableName = `bench-facturx-${randomUUID()}`;
    const client = new DynamoDBClient({
      endpoint,
      region: "local",
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
    });
    await ensureTable(client, tableName);
    client.destroy();
    const db = createDb({ tableName, dynamoEndpoint: endpoint, region: "local" });
    const ctx = { db, clock: () => new Date(), userId: "bench" };
    await updateProfile(ctx, {
      businessName: "Muster Design",
      address: { line1: "Hauptstraße 1", city: "Berlin", postalCode: "10115", country: "DE" },
      taxId: "DE123456789",
      email: "rechnung@muster-design.de",
    });
    const buyer = await createClient(ctx, {
      name: "Beispiel AG",
      currency: "EUR",
      address: { line1: "Marktplatz 5", city: "München", postalCode: "80331", country: "DE" },
    });
    const draft = await createInvoice(ctx, {
      clientId: buyer.id,
      lineItems: [
        { description: "Beratung", quantity: "10", unitPrice: "100.00", taxRate: "0.19" },
        { description: "Reisekosten (pauschal)", unitPrice: "240.50", taxRate: "0.19" },
      ],
    });
    const invoice = await finalizeInvoice(ctx, draft.id);
    db.doc.destroy();
    const path = `/public/invoices/${invoice.publicToken}/e-invoice`;
    const event = (label: string) => ({
      ...httpApiEvent("GET", path, { query: "format=facturx", routeKey: "ANY /public/invoices/{token}/e-invoice" }),
      label,
    });
    const eventsFile = join(outdir, "events.json");
    writeFileSync(eventsFile, JSON.stringify([event("first Factur-X"), event("second Factur-X")]));
    const { env } = lambdaSetup(
      fn,
      { tableName, emailSender: "bench@example.com", apiUrl: "https://api.example.com" },
      endpoint,
      "environment",
      built!.dir,
    );
    const out = spawnSync(
      process.execPath,
      ["--input-type=module", "-e", TIMED_INVOKE, built!.bundle, built!.exportName, eventsFile],
      {
        encoding: "utf8",
        env: { PATH: process.env.PATH, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true", ...env },
      },
    );
    if (out.status !== 0) throw new Error(`the Documents bundle failed: ${out.stderr}`);
    const rows = JSON.parse(out.stdout.trim().split("\n").pop()!) as (FacturXRow & { status: number })[];
    for (const row of rows.slice(1)) if (row.status !== 200) throw new Error(`${row.request}: ${row.status}`);
    return rows.map((row, i) => ({
      request: row.request,
      cpuMs: round(row.cpuMs),
      wallMs: round(row.wallMs),
      goal: i === 1 ? "< 2000 ms CPU (init excluded)" : "",
      meetsGoal: i === 1 ? row.cpuMs < 2000 : true,
    }));
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

const round = (n: number) => Math.round(n * 10) / 10;
