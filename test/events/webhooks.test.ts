import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { jobs } from "@invoicing/core/jobs/all";
import { createTestEnv, expectProblem, type TestEnv, type TestUser } from "../support/env";
import { line, newClient, ok } from "../invoices/fixtures";
import { startReceiver, type Receiver } from "./receiver";

/**
 * Events and webhooks end to end, locally: the app over DynamoDB Local, the table's stream read
 * into the same subscriber the Lambda runs, a real HTTP receiver, and the `standardwebhooks`
 * library verifying each delivery unchanged.
 */
let env: TestEnv;
let receiver: Receiver;
const ATTEMPT_TIMEOUT = 15_000;

beforeAll(async () => {
  // Private targets allowed (the receiver is on 127.0.0.1). The attempt timeout is the hang case's
  // whole window for the other endpoint's delivery: generous, so a loaded machine cannot miss it.
  env = await createTestEnv({
    extraDeps: {
      webhookPolicy: { allowPrivate: true, timeoutMs: ATTEMPT_TIMEOUT } as { allowPrivate: boolean },
    },
  });
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

async function endpoint(user: TestUser, events: string[] = ["*"], url = receiver.url) {
  const res = ok(await user.call("POST", "/webhook-endpoints", { url, events, description: "test receiver" }), 201);
  return res.body as { id: number; secret: string };
}

const verified = (secret: string, received: Receiver["received"]) =>
  received.map(
    (r) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { id: string; type: string },
  );

describe("an invoice from create to paid", () => {
  it("reaches the receiver as exactly the expected events, each verified; GET /events shows each once", async () => {
    const user = await env.user();
    const { id: endpointId, secret } = await endpoint(user);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const start = receiver.received.length;

    const client = await newClient(user);
    const invoice = ok(await user.call("POST", "/invoices", { clientId: client.id, lineItems: [line()] }), 201).body;
    ok(await user.call("PATCH", `/invoices/${invoice.id}`, { notes: "Thanks" }));
    ok(await user.call("POST", `/invoices/${invoice.id}/finalize`));
    ok(await user.call("POST", `/invoices/${invoice.id}/send`));
    const partial = ok(
      await user.call("POST", `/invoices/${invoice.id}/payments`, { amount: "20.00", paymentMethod: "cash" }),
      201,
    ).body;
    ok(await user.call("POST", `/invoices/${invoice.id}/mark-paid`, { paymentMethod: "bank_transfer" }));
    await env.drainStream();

    const expected = [
      "client.created",
      "invoice.created",
      "invoice.updated",
      "invoice.finalized",
      "invoice.sent",
      "payment.created",
      "invoice.partially_paid",
      "payment.created",
      "invoice.paid",
    ];
    const deliveries = receiver.received.slice(start);
    const payloads = verified(secret, deliveries);
    // Exactly these, each once. The stream orders the changes of one record; a payment and its
    // invoice are two records of one transaction, which the stream may give in either order.
    expect(payloads.map((p) => p.type).sort()).toEqual([...expected].sort());
    expect(payloads.map((p) => p.type).filter((t) => t.startsWith("invoice."))).toEqual(
      expected.filter((t) => t.startsWith("invoice.")),
    );
    // webhook-id is the event id, and the signature's timestamp is the wall clock's (not the app's).
    for (const [i, d] of deliveries.entries()) {
      expect(d.headers["webhook-id"]).toBe(payloads[i]!.id);
      expect(Math.abs(Number(d.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(120);
    }
    const bodies = deliveries.map((d) => JSON.parse(d.body));
    expect(bodies.find((b) => b.type === "invoice.partially_paid")).toMatchObject({
      data: { status: "sent", amountPaid: "20.00", amountDue: "44.92" },
    });
    expect(bodies.find((b) => b.type === "invoice.paid")).toMatchObject({
      resourceType: "invoice",
      resourceId: invoice.id,
      data: { status: "paid", amountPaid: "64.92" },
    });
    expect(bodies.find((b) => b.type === "payment.created" && b.resourceId === partial.id)).toMatchObject({
      resourceType: "payment",
      data: { id: partial.id, amount: "20.00", paymentMethod: "cash", invoiceId: invoice.id },
    });

    // The activity log: the same history, newest first, once each.
    const events = ok(await user.call("GET", "/events?limit=200")).body as { id: string; type: string }[];
    expect(events.map((e) => e.id).sort()).toEqual(payloads.map((p) => p.id).sort());
    expect(events.map((e) => e.type).filter((t) => t.startsWith("invoice."))).toEqual(
      expected.filter((t) => t.startsWith("invoice.")).reverse(),
    );

    // The same stream records fed again (a new reader from the stream's start): nothing new.
    const again = env.newStreamReader();
    expect(await again.drain()).toBeGreaterThan(0);
    again.close();
    expect(ok(await user.call("GET", "/events?limit=200")).body.map((e: { id: string }) => e.id)).toEqual(
      events.map((e) => e.id),
    );
    expect(receiver.received.length).toBe(start + expected.length);

    // Filters and pagination.
    const onlyPaid = ok(await user.call("GET", "/events?type=invoice.paid")).body;
    expect(onlyPaid.map((e: { id: string }) => e.id)).toEqual([payloads.at(-1)!.id]);
    const ofInvoice = ok(await user.call("GET", `/events?resourceType=invoice&resourceId=${invoice.id}`)).body;
    expect(ofInvoice.map((e: { type: string }) => e.type)).toEqual(
      expected.filter((t) => t.startsWith("invoice.")).reverse(),
    );
    // Pages of 4 by following Link: the same events, in the same order.
    const paged: { id: string }[] = [];
    for (let path: string | undefined = "/events?limit=4"; path; ) {
      const page = ok(await user.call("GET", path));
      paged.push(...page.body);
      const next = /<([^>]+)>/.exec(page.headers.get("link") ?? "")?.[1];
      path = next ? `${new URL(next).pathname}${new URL(next).search}` : undefined;
    }
    expect(paged.map((e) => e.id)).toEqual(events.map((e) => e.id));

    // The deliveries list: one succeeded first attempt per event, newest first.
    const list = ok(await user.call("GET", `/webhook-endpoints/${endpointId}/deliveries`)).body;
    expect(list).toHaveLength(expected.length);
    expect(new Set(list.map((d: { eventId: string }) => d.eventId))).toEqual(new Set(payloads.map((p) => p.id)));
    for (const d of list)
      expect(d).toMatchObject({
        attempt: 1,
        status: "succeeded",
        responseStatus: 204,
        error: null,
        nextAttemptAt: null,
      });
  });

  it("sends an endpoint only the types it subscribes to", async () => {
    const user = await env.user();
    const { secret } = await endpoint(user, ["client.updated"]);
    const start = receiver.received.length;
    const client = await newClient(user);
    ok(await user.call("PATCH", `/clients/${client.id}`, { name: "Acme Two" }));
    await env.drainStream();
    expect(verified(secret, receiver.received.slice(start)).map((p) => p.type)).toEqual(["client.updated"]);
  });
});

describe("retries", () => {
  it("a receiver that fails twice gets the event on the third attempt, from the webhooks job", async () => {
    const user = await env.user();
    const { id: endpointId, secret } = await endpoint(user, ["client.created"]);
    const start = receiver.received.length;
    receiver.script.push(500, "close");
    await newClient(user);
    await env.drainStream(); // attempt 1: 500

    const t0 = env.clock.now.getTime();
    const runJob = async (minutes: number) => jobs.webhooks!(env.deps, new Date(t0 + minutes * 60_000));
    expect(await runJob(0.5)).toMatchObject({ job: "webhooks", changed: 0 }); // not due yet
    expect(await runJob(2)).toMatchObject({ failed: 1 }); // attempt 2: connection closed
    expect(await runJob(5)).toMatchObject({ changed: 0 }); // attempt 3 is due 5 minutes after attempt 2
    expect(await runJob(8)).toMatchObject({ succeeded: 1 });
    expect(await runJob(60)).toMatchObject({ changed: 0 });

    const got = receiver.received.slice(start);
    expect(got.map((r) => r.answered)).toEqual([500, "close", "ok"]);
    // The same event each time: one id, each signature valid.
    expect(new Set(verified(secret, got).map((p) => p.id)).size).toBe(1);
    const list = ok(await user.call("GET", `/webhook-endpoints/${endpointId}/deliveries`)).body;
    expect(list.map((d: { attempt: number; status: string }) => [d.attempt, d.status])).toEqual([
      [3, "succeeded"],
      [2, "failed"],
      [1, "failed"],
    ]);
    // Each failure names when the next attempt is due: 1 minute after the first, 5 after the second.
    expect(list[2]).toMatchObject({
      responseStatus: 500,
      error: "HTTP 500",
      nextAttemptAt: new Date(t0 + 60_000).toISOString(),
    });
    expect(list[1].nextAttemptAt).toBe(new Date(t0 + 7 * 60_000).toISOString());
    expect(list[1]).toMatchObject({ responseStatus: null, error: expect.stringContaining("connection") });
  });

  it("a receiver that never answers is cut off at the timeout and retried; other endpoints are not held up", async () => {
    const user = await env.user();
    // A receiver that takes every request and never answers; it notes when the sender gives up on it.
    const hanging = { arrived: 0, cutOff: 0 };
    const hangingServer = createServer((req) => {
      hanging.arrived++;
      req.socket.once("close", () => hanging.cutOff++);
    });
    await new Promise<void>((resolve) => hangingServer.listen(0, "127.0.0.1", resolve));
    try {
      const hangingUrl = `http://127.0.0.1:${(hangingServer.address() as AddressInfo).port}/hooks`;
      const { id: slowId } = await endpoint(user, ["client.created"], hangingUrl);
      const { secret } = await endpoint(user, ["client.created"]);
      const start = receiver.received.length;
      await newClient(user);
      // While the stream is read (and the hanging attempt waits for its timeout), the other
      // endpoint gets its delivery: it is in before the hanging one is cut off.
      let drained = false;
      const draining = env.drainStream().finally(() => (drained = true));
      while (receiver.received.length === start && !drained) await new Promise((r) => setTimeout(r, 20));
      const atFastDelivery = { ...hanging };
      await draining;
      expect(verified(secret, receiver.received.slice(start)).map((p) => p.type)).toEqual(["client.created"]);
      expect(atFastDelivery.cutOff, "the fast endpoint waited for the hanging one's timeout").toBe(0);
      expect(hanging).toEqual({ arrived: 1, cutOff: 1 });
      const list = ok(await user.call("GET", `/webhook-endpoints/${slowId}/deliveries`)).body;
      expect(list.map((d: { attempt: number; status: string }) => [d.attempt, d.status])).toEqual([
        [2, "pending"],
        [1, "failed"],
      ]);
      expect(list[1].error).toBe(`no answer within ${ATTEMPT_TIMEOUT} ms`);
    } finally {
      hangingServer.closeAllConnections();
      await new Promise((resolve) => hangingServer.close(resolve));
    }
  });

  it("one user's hanging receiver does not hold up another user's endpoint of the same id", async () => {
    // Endpoint ids are counted per user: both users' first endpoint is number 1.
    const slow = await startReceiver();
    try {
      slow.script.push("hang");
      const hanging = await env.user();
      const other = await env.user();
      expect((await endpoint(hanging, ["client.created"], slow.url)).id).toBe(1);
      const { id, secret } = await endpoint(other, ["client.created"]);
      expect(id).toBe(1);
      const start = receiver.received.length;
      await newClient(hanging); // first in the stream: its attempt is made first
      await newClient(other);
      await env.drainStream();
      // The other user's event was delivered by the subscriber itself, not left for the job.
      expect(verified(secret, receiver.received.slice(start)).map((p) => p.type)).toEqual(["client.created"]);
      const list = ok(await other.call("GET", "/webhook-endpoints/1/deliveries")).body;
      expect(list.map((d: { attempt: number; status: string }) => [d.attempt, d.status])).toEqual([[1, "succeeded"]]);
    } finally {
      await slow.close();
    }
  });

  it("gives up after the seventh attempt", async () => {
    const user = await env.user();
    const { id } = await endpoint(user, ["client.created"]);
    receiver.script.push(...Array(7).fill(503));
    await newClient(user);
    await env.drainStream();
    const t0 = env.clock.now.getTime();
    let minutes = 0;
    for (const delay of [1, 5, 30, 120, 360, 1440, 10_000]) {
      minutes += delay + 1;
      await jobs.webhooks!(env.deps, new Date(t0 + minutes * 60_000));
    }
    const list = ok(await user.call("GET", `/webhook-endpoints/${id}/deliveries`)).body;
    expect(list.map((d: { attempt: number }) => d.attempt)).toEqual([7, 6, 5, 4, 3, 2, 1]);
    expect(list.every((d: { status: string }) => d.status === "failed")).toBe(true);
    expect(list[0].nextAttemptAt).toBeNull();
  });
});

describe("webhook endpoints", () => {
  it("CRUD: the secret only at creation; PATCH; DELETE; 404 for another user's", async () => {
    const user = await env.user();
    const created = await endpoint(user, ["invoice.paid"]);
    const listed = ok(await user.call("GET", "/webhook-endpoints")).body;
    expect(listed).toEqual([
      {
        id: created.id,
        url: receiver.url,
        events: ["invoice.paid"],
        description: "test receiver",
        enabled: true,
        createdAt: expect.any(String),
      },
    ]);
    const got = ok(await user.call("GET", `/webhook-endpoints/${created.id}`)).body;
    expect(got).not.toHaveProperty("secret");
    const patched = ok(
      await user.call("PATCH", `/webhook-endpoints/${created.id}`, { enabled: false, events: ["*"] }),
    ).body;
    expect(patched).toMatchObject({ enabled: false, events: ["*"] });
    const other = await env.user();
    expectProblem(await other.call("GET", `/webhook-endpoints/${created.id}`), 404, "not_found");
    expect(ok(await user.call("DELETE", `/webhook-endpoints/${created.id}`), 204).status).toBe(204);
    expectProblem(await user.call("GET", `/webhook-endpoints/${created.id}`), 404, "not_found");
  });

  it("rejects bad input: empty or unknown events, an 11th endpoint", async () => {
    const user = await env.user();
    expectProblem(
      await user.call("POST", "/webhook-endpoints", { url: receiver.url, events: [] }),
      400,
      "validation_error",
    );
    expectProblem(
      await user.call("POST", "/webhook-endpoints", { url: receiver.url, events: ["invoice.eaten"] }),
      400,
      "validation_error",
    );
    expectProblem(
      await user.call("POST", "/webhook-endpoints", { url: "not a url", events: ["*"] }),
      400,
      "validation_error",
    );
    await Promise.all(Array.from({ length: 10 }, () => endpoint(user)));
    expectProblem(
      await user.call("POST", "/webhook-endpoints", { url: receiver.url, events: ["*"] }),
      422,
      "limit_exceeded",
    );
    const [first] = ok(await user.call("GET", "/webhook-endpoints")).body;
    ok(await user.call("DELETE", `/webhook-endpoints/${first.id}`), 204);
    await endpoint(user); // a deletion frees a place
  });

  it("refuses concurrent creates past 10", async () => {
    const user = await env.user();
    const results = await Promise.all(
      Array.from({ length: 14 }, () => user.call("POST", "/webhook-endpoints", { url: receiver.url, events: ["*"] })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(10);
    for (const r of results.filter((r) => r.status !== 201)) expectProblem(r, 422, "limit_exceeded");
  });
});

describe("the URL guard when deployed (private targets not allowed)", () => {
  it("refuses http, loopback, private, link-local and metadata targets at creation", async () => {
    const deployed = await createTestEnv();
    const user = await deployed.user();
    for (const url of [
      "http://example.com/hooks",
      "https://127.0.0.1/hooks",
      "https://localhost/hooks",
      "https://10.1.2.3/hooks",
      "https://192.168.1.1/hooks",
      "https://172.16.0.1/hooks",
      "https://169.254.169.254/latest/meta-data",
      "https://[::1]/hooks",
      "https://[fd00:ec2::254]/hooks",
      "https://[fe80::1]/hooks",
      "https://[::ffff:127.0.0.1]/hooks",
      "https://[::ffff:a9fe:a9fe]/hooks",
    ]) {
      expectProblem(
        await user.call("POST", "/webhook-endpoints", { url, events: ["*"] }),
        422,
        "webhook_url_not_allowed",
      );
    }
  });
});
