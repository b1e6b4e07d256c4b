import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { withConcurrency } from "@invoicing/core/concurrency";
import { createDb } from "@invoicing/core/db/dynamodb";
import { createApp } from "@invoicing/functions/app/create-app";
import { request } from "../../test/support/env";
import { createFreshTable } from "../../test/support/table";
import type { AwsLikeDynamo } from "./aws-like-dynamo";
import { setupUser } from "./population";
import type { Background } from "./runner";
import { percentile, round, type SimulatedSes, simDeps, sleep } from "./sim";

/**
 * (ii) A quiet user's event, webhook and email lag — from its `send` answered to the event in
 * `GET /events`, the webhook at its receiver, the email handed to SES — alone, and while a large
 * user sends `BURST` invoices whose webhooks go to a receiver answering 200 after 2 s.
 * Scaled: the 2,000 invoices in 10 minutes keep their rate (3.3 a second) and become
 * BURST invoices, an 18-second burst: long enough for the slow receiver's attempts (2 s each, 6–7 in
 * flight at that rate) to reach their steady state, short enough to run in a few minutes.
 */
export const BURST = 60;
export const BURST_PER_SECOND = 2000 / 600;
export const SLOW_RECEIVER_MS = 2000;
const QUIET_EVERY_MS = 500;
const ALONE_SAMPLES = 12;
/** How long after its last send the quiet user's lags are waited for; later ones count as this. */
const WAIT_CAP_MS = 30_000;

type Kind = "event" | "webhook" | "email";
const KINDS: Kind[] = ["event", "webhook", "email"];

export interface LagFigure {
  kind: Kind;
  phase: "alone" | "during burst";
  samples: number;
  /** Samples that had not arrived by the cap: counted at the cap, so the percentile is a floor. */
  notArrived: number;
  p50Ms: number;
  p99Ms: number;
}

export interface LagResult {
  background: string;
  figures: LagFigure[];
  goals: { kind: Kind; aloneP99Ms: number; duringP99Ms: number; ratio: number; met: boolean }[];
  /** The quiet user's sends answered with an error (not in the samples). */
  failedSends: number;
}

interface Sample {
  invoiceId: number;
  number: string;
  sentAt: number;
  arrived: Partial<Record<Kind, number>>;
}

export async function measureLag(
  endpoint: string,
  dynamo: AwsLikeDynamo,
  background: Background,
  log: (line: string) => void,
): Promise<LagResult> {
  const { tableName } = await createFreshTable(endpoint, "scale-lag");
  const deps = simDeps(dynamo.url, tableName, new Date().toISOString());
  const app = createApp(deps);
  const ses = deps.outbox as SimulatedSes;

  // The receivers: the quiet user's answers at once, the large user's after SLOW_RECEIVER_MS.
  const webhooks: { type: string; resourceId: number; at: number }[] = [];
  let slowMs = SLOW_RECEIVER_MS;
  const receivers = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.url === "/quiet") {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { type: string; resourceId: number };
        webhooks.push({ type: body.type, resourceId: body.resourceId, at: performance.now() });
        res.end("ok");
      } else setTimeout(() => res.end("ok"), slowMs);
    });
  });
  await new Promise<void>((resolve) => receivers.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(receivers.address() as AddressInfo).port}`;

  // The preparation goes straight to DynamoDB Local: it is not what is measured.
  const direct = createDb({ tableName, dynamoEndpoint: endpoint, region: "local" });
  const prepApp = createApp({ ...deps, db: direct });
  const quietPrep = await setupUser(prepApp, direct, "quiet");
  const largePrep = await setupUser(prepApp, direct, "large");
  const via = (user: typeof quietPrep) => ({
    ...user,
    call: async (method: string, path: string, body?: unknown) => {
      const res = await request(app, method, path, body, { Authorization: `Bearer ${user.key}` });
      if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${res.text.slice(0, 300)}`);
      return res.body;
    },
  });
  const quiet = via(quietPrep);
  const large = via(largePrep);
  const prepare = async (user: typeof quietPrep, count: number) => {
    const made: { id: number; number: string }[] = [];
    await withConcurrency(
      Array.from({ length: count }, (_, i) => i),
      4,
      "prepare",
      async () => {
        const invoice = await user.call("POST", "/invoices", {
          clientId: user.clientId,
          lineItems: [{ description: "Work", quantity: "1", unitPrice: "10.00" }],
        });
        const done = await user.call("POST", `/invoices/${invoice.id}/finalize`);
        made.push({ id: invoice.id, number: done.invoiceNumber });
      },
    );
    return made;
  };
  log("  preparing finalized invoices…");
  const duringSamples = Math.ceil((BURST / BURST_PER_SECOND) * (1000 / QUIET_EVERY_MS));
  const quietInvoices = await prepare(quietPrep, ALONE_SAMPLES + duringSamples);
  const largeInvoices = await prepare(largePrep, BURST);

  const stop = await background.start(deps, endpoint, tableName);
  try {
    log("  catching up with the preparation's changes…");
    // The stream is read in order: the last invoice each user prepared, finalized in GET /events.
    for (const [user, invoices] of [
      [quiet, quietInvoices],
      [large, largeInvoices],
    ] as const) {
      const last = Math.max(...invoices.map((i) => i.id));
      await waitFor(async () => {
        const res = await user.call("GET", `/events?type=invoice.finalized&resourceType=invoice&resourceId=${last}`);
        return Array.isArray(res) && res.length > 0;
      }, 90_000);
    }
    // The receivers only now: the preparation's events are not the measurement's.
    await quietPrep.call("POST", "/webhook-endpoints", { url: `${base}/quiet`, events: ["*"] });
    await largePrep.call("POST", "/webhook-endpoints", { url: `${base}/slow`, events: ["*"] });

    // The event lag: GET /events polled as the quiet user would.
    const seen = new Map<number, number>();
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const res = await quiet.call("GET", "/events?type=invoice.sent&limit=100").catch(() => undefined);
        const list = (Array.isArray(res) ? res : []) as { resourceId: number }[];
        for (const e of list) if (!seen.has(e.resourceId)) seen.set(e.resourceId, performance.now());
        await sleep(100);
      }
    })();
    const collect = (samples: Sample[]) => {
      for (const s of samples) {
        s.arrived.event ??= seen.get(s.invoiceId);
        s.arrived.webhook ??= webhooks.find((w) => w.type === "invoice.sent" && w.resourceId === s.invoiceId)?.at;
        s.arrived.email ??= ses.sent.find(
          (m) => m.message.userId === "quiet" && m.message.subject.includes(`Invoice ${s.number} `),
        )?.at;
      }
      return samples.every((s) => KINDS.every((k) => s.arrived[k] !== undefined));
    };
    let failedSends = 0;
    const sendQuiet = async (count: number, offset: number): Promise<Sample[]> => {
      const samples: Sample[] = [];
      for (let i = 0; i < count; i++) {
        const next = performance.now() + QUIET_EVERY_MS;
        const invoice = quietInvoices[offset + i]!;
        // A send the service refused (503 after the SDK's retries) is a failure of the quiet user's, counted.
        const sent = await quiet.call("POST", `/invoices/${invoice.id}/send`).then(
          () => true,
          () => false,
        );
        if (sent)
          samples.push({ invoiceId: invoice.id, number: invoice.number, sentAt: performance.now(), arrived: {} });
        else failedSends++;
        await sleep(Math.max(0, next - performance.now()));
      }
      return samples;
    };
    const settle = async (samples: Sample[]) => {
      const cap = performance.now() + WAIT_CAP_MS;
      while (!collect(samples) && performance.now() < cap) await sleep(200);
    };

    log(`  alone: ${ALONE_SAMPLES} sends, one every ${QUIET_EVERY_MS} ms…`);
    const alone = await sendQuiet(ALONE_SAMPLES, 0);
    await settle(alone);
    log(
      `  alone: ${JSON.stringify(figuresOf("alone", alone).map(({ kind, p50Ms, p99Ms }) => ({ kind, p50Ms, p99Ms })))}`,
    );
    log(
      `  during: the large user sends ${BURST} invoices at ${round(BURST_PER_SECOND, 1)}/s, receiver 200 after ${SLOW_RECEIVER_MS} ms…`,
    );
    const burst = (async () => {
      const inFlight: Promise<unknown>[] = [];
      for (const invoice of largeInvoices) {
        const next = performance.now() + 1000 / BURST_PER_SECOND;
        inFlight.push(large.call("POST", `/invoices/${invoice.id}/send`).catch(() => undefined));
        await sleep(Math.max(0, next - performance.now()));
      }
      await Promise.all(inFlight);
    })();
    const during = await sendQuiet(duringSamples, ALONE_SAMPLES);
    await settle(during);
    await burst;
    polling = false;
    await poller;

    const figures = [...figuresOf("alone", alone), ...figuresOf("during burst", during)];
    const goals = KINDS.map((kind) => {
      const aloneP99 = figures.find((f) => f.kind === kind && f.phase === "alone")!.p99Ms;
      const duringP99 = figures.find((f) => f.kind === kind && f.phase === "during burst")!.p99Ms;
      const ratio = round(duringP99 / aloneP99, 2);
      return { kind, aloneP99Ms: aloneP99, duringP99Ms: duringP99, ratio, met: ratio <= 2 };
    });
    return { background: background.describe, figures, goals, failedSends };
  } finally {
    slowMs = 0; // let whatever still waits on the slow receiver finish at once
    await stop();
    receivers.closeAllConnections();
    receivers.close();
    deps.db.doc.destroy();
    direct.doc.destroy();
  }
}

function figuresOf(phase: LagFigure["phase"], samples: Sample[]): LagFigure[] {
  return KINDS.map((kind) => {
    const lags = samples.map((s) => (s.arrived[kind] ?? s.sentAt + WAIT_CAP_MS) - s.sentAt);
    return {
      kind,
      phase,
      samples: samples.length,
      notArrived: samples.filter((s) => s.arrived[kind] === undefined).length,
      p50Ms: round(percentile(lags, 50)),
      p99Ms: round(percentile(lags, 99)),
    };
  });
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const until = performance.now() + timeoutMs;
  while (performance.now() < until) {
    if (await check().catch(() => false)) return;
    await sleep(250);
  }
  throw new Error("the stream did not catch up in time");
}
