import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobs } from "@invoicing/core/jobs/all";
import type { JobName } from "@invoicing/core/job";
import { op, type FaultKind, type RequestMatcher } from "../support/fault-proxy";
import { expectProblem, type TestResponse, type TestUser } from "../support/env";
import { RUNS, chaos, createFaultyEnv, partition, problemShape, prng, type FaultyEnv } from "./harness";
import { WIDGET as line } from "../support/line-items";

/**
 * DynamoDB misbehaving under a real request: a proxy in front of DynamoDB Local throttles, fails,
 * reports transaction conflicts, or applies a write and loses its response (test/support/fault-proxy.ts).
 * The app must retry what is safe, answer 503 with Retry-After when it gives up, never leave a
 * half-written change, and never answer a write that happened as if it had not.
 */
let world: FaultyEnv;

beforeAll(async () => {
  world = await createFaultyEnv({ silenceWarnings: true });
});

afterAll(async () => {
  await world?.close();
});

/** A fresh user (fresh counters) whose requests go through the proxy; set-up calls go direct. */
async function freshUser(): Promise<{ direct: TestUser; faulty: TestUser }> {
  world.proxy.clear();
  const direct = await world.env.user();
  return { direct, faulty: world.as(direct) };
}

async function client(
  user: TestUser,
  body: Record<string, unknown> = { name: "Acme", email: "billing@acme.test" },
): Promise<number> {
  const res = await user.call("POST", "/clients", body);
  expect(res.status).toBe(201);
  return res.body.id;
}

async function invoice(
  user: TestUser,
  clientId: number,
  status: "draft" | "finalized" | "sent" = "draft",
): Promise<number> {
  const res = await user.call("POST", "/invoices", { clientId, lineItems: [line] });
  expect(res.status).toBe(201);
  const id = res.body.id as number;
  if (status !== "draft") expect((await user.call("POST", `/invoices/${id}/finalize`)).status).toBe(200);
  if (status === "sent") expect((await user.call("POST", `/invoices/${id}/send`)).status).toBe(200);
  return id;
}

/** Runs `act` with one fault injected on the matching request; asserts the fault really happened. */
async function withFault(
  kind: FaultKind,
  match: RequestMatcher,
  act: () => Promise<TestResponse>,
  times = 1,
): Promise<TestResponse> {
  const rule = world.proxy.inject({ match, fault: kind, times });
  try {
    const res = await act();
    if (times === Infinity) expect(rule.hits, `the ${kind} fault never hit`).toBeGreaterThan(0);
    else expect(rule.hits, `the ${kind} fault did not hit as planned`).toBe(times);
    return res;
  } finally {
    rule.remove();
  }
}

const LOST_RESPONSES: FaultKind[] = ["timeout-after-write", "reset-after-write"];

describe.each(LOST_RESPONSES)("a write that reached the table but whose response was lost (%s)", (kind) => {
  it("POST /clients (one conditional Put): 201, and exactly one client exists", async () => {
    const { faulty } = await freshUser();
    const res = await withFault(kind, op("PutItem", "CLIENT#"), () =>
      faulty.call("POST", "/clients", { name: "Once" }),
    );
    expect(res.status).toBe(201);
    const list = await faulty.call("GET", "/clients");
    expect(list.body.map((c: { id: number; name: string }) => [c.id, c.name])).toEqual([[res.body.id, "Once"]]);
  });

  it("PATCH /clients/{id} with If-Match (a Put on the version read): 200, not 412, one version step", async () => {
    const { direct, faulty } = await freshUser();
    const id = await client(direct);
    const etag = (await direct.call("GET", `/clients/${id}`)).headers.get("etag")!;
    const res = await withFault(kind, op("PutItem", "CLIENT#"), () =>
      faulty.call("PATCH", `/clients/${id}`, { name: "Renamed" }, { "If-Match": etag }),
    );
    expect(res.status).toBe(200);
    const now = await direct.call("GET", `/clients/${id}`);
    expect(now.body).toEqual(res.body);
    expect(now.headers.get("etag")).toBe(res.headers.get("etag"));
    expect(Number(JSON.parse(res.headers.get("etag")!))).toBe(Number(JSON.parse(etag)) + 1);
  });

  it("PATCH /invoices/{id} with If-Match: 200, lines written once", async () => {
    const { direct, faulty } = await freshUser();
    const id = await invoice(direct, await client(direct));
    const etag = (await direct.call("GET", `/invoices/${id}`)).headers.get("etag")!;
    const res = await withFault(kind, op("PutItem", "INVOICE#"), () =>
      faulty.call("PATCH", `/invoices/${id}`, { lineItems: [line, line] }, { "If-Match": etag }),
    );
    expect(res.status).toBe(200);
    expect(res.body.total).toBe("129.84");
    expect((await direct.call("GET", `/invoices/${id}`)).body).toEqual(res.body);
  });

  it("DELETE /clients/{id} (one conditional Delete): 204, not 404", async () => {
    const { direct, faulty } = await freshUser();
    const id = await client(direct);
    // Sent as a one-item transaction (commit.ts: a Delete leaves no item to carry a write token).
    const deleteOfClient: RequestMatcher = (operation, body) =>
      op("DeleteItem", "CLIENT#")(operation, body) || op("TransactWriteItems", "CLIENT#")(operation, body);
    const res = await withFault(kind, deleteOfClient, () => faulty.call("DELETE", `/clients/${id}`));
    expect(res.status).toBe(204);
    expectProblem(await direct.call("GET", `/clients/${id}`), 404, "not_found");
  });

  it("POST /invoices (a transaction with the client reference): 201, one invoice, the reference counted once", async () => {
    const { direct, faulty } = await freshUser();
    const clientId = await client(direct);
    const res = await withFault(kind, op("TransactWriteItems", "INVOICE#"), () =>
      faulty.call("POST", "/invoices", { clientId, lineItems: [line] }),
    );
    expect(res.status).toBe(201);
    expect((await direct.call("GET", "/invoices")).body.map((i: { id: number }) => i.id)).toEqual([res.body.id]);
    // refs counted once: after deleting the one invoice, the client can be deleted.
    expect((await direct.call("DELETE", `/invoices/${res.body.id}`)).status).toBe(204);
    expect((await direct.call("DELETE", `/clients/${clientId}`)).status).toBe(204);
  });

  it("finalize (transaction with the number counter): 200, numbers stay gapless", async () => {
    const { direct, faulty } = await freshUser();
    const clientId = await client(direct);
    const [a, b] = [await invoice(direct, clientId), await invoice(direct, clientId)];
    const res = await withFault(kind, op("TransactWriteItems", "INVOICE#"), () =>
      faulty.call("POST", `/invoices/${a}/finalize`),
    );
    expect(res.status).toBe(200);
    expect(res.body.invoiceNumber).toBe("INV-000001");
    expect((await direct.call("POST", `/invoices/${b}/finalize`)).body.invoiceNumber).toBe("INV-000002");
  });

  it("send (transaction with reminders and the email): 200, five reminders, not ten", async () => {
    const { direct, faulty } = await freshUser();
    const id = await invoice(direct, await client(direct), "finalized");
    const res = await withFault(kind, op("TransactWriteItems", "INVOICE#"), () =>
      faulty.call("POST", `/invoices/${id}/send`),
    );
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("sent");
    // Due in 30 days, so every reminder is ahead: 3 days before, on the day, 7, 14 and 30 days after.
    const due = Date.parse(res.body.dueDate);
    const day = 86_400_000;
    const reminders = await direct.call("GET", `/invoices/${id}/reminders`);
    expect(reminders.body.map((r: { scheduledAt: string; status: string }) => [r.scheduledAt, r.status])).toEqual(
      [-3, 0, 7, 14, 30].map((days) => [new Date(due + days * day).toISOString(), "scheduled"]),
    );
  });

  it("mark-paid (one transaction: its payment and the invoice): 200, not 422 invalid_transition, one payment", async () => {
    const { direct, faulty } = await freshUser();
    const id = await invoice(direct, await client(direct), "sent");
    const res = await withFault(kind, op("TransactWriteItems", "PAYMENT#"), () =>
      faulty.call("POST", `/invoices/${id}/mark-paid`, { paymentMethod: "cash" }),
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "paid", amountPaid: "64.92", paymentMethod: "cash" });
    expect((await direct.call("GET", `/invoices/${id}`)).body).toEqual(res.body);
    expect((await direct.call("GET", `/invoices/${id}/payments`)).body).toHaveLength(1);
  });

  it("void: 200, and a second void is still refused", async () => {
    const { direct, faulty } = await freshUser();
    const id = await invoice(direct, await client(direct), "finalized");
    const res = await withFault(kind, op("UpdateItem", "INVOICE#"), () => faulty.call("POST", `/invoices/${id}/void`));
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("void");
    expectProblem(await faulty.call("POST", `/invoices/${id}/void`), 422, "invalid_transition");
  });

  it("estimate accept (transition) and convert (transaction): 200 and 201, one invoice", async () => {
    const { direct, faulty } = await freshUser();
    const clientId = await client(direct);
    const est = await direct.call("POST", "/estimates", { clientId, lineItems: [line] });
    expect(est.status).toBe(201);
    expect((await direct.call("POST", `/estimates/${est.body.id}/send`)).status).toBe(200);
    const accepted = await withFault(kind, op("UpdateItem", "ESTIMATE#"), () =>
      faulty.call("POST", `/estimates/${est.body.id}/accept`),
    );
    expect(accepted.status).toBe(200);
    expect(accepted.body.status).toBe("accepted");
    const converted = await withFault(kind, op("TransactWriteItems", "ESTIMATE#"), () =>
      faulty.call("POST", `/estimates/${est.body.id}/convert`),
    );
    expect(converted.status).toBe(201);
    expect((await direct.call("GET", "/invoices")).body.map((i: { id: number }) => i.id)).toEqual([converted.body.id]);
  });

  it("POST with an Idempotency-Key whose claim was applied: 201, not 409; the key then replays", async () => {
    const { faulty } = await freshUser();
    const headers = { "Idempotency-Key": `claim-${kind}` };
    const res = await withFault(kind, op("PutItem", "IDEMPOTENCY#"), () =>
      faulty.call("POST", "/clients", { name: "Keyed" }, headers),
    );
    expect(res.status).toBe(201);
    const again = await faulty.call("POST", "/clients", { name: "Keyed" }, headers);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(res.body);
    expect((await faulty.call("GET", "/clients")).body).toHaveLength(1);
  });
});

const TRANSIENT: FaultKind[] = ["throttle", "provisioned", "server-error"];
const OPERATIONS = ["GetItem", "Query", "BatchGetItem", "PutItem", "UpdateItem", "TransactWriteItems"];

/** One invoice's whole life, each step asserted; touches every operation in OPERATIONS. */
async function lifecycle(user: TestUser): Promise<void> {
  const clientId = (await user.call("POST", "/clients", { name: "Life", email: "life@acme.test" })).body.id;
  expect(clientId).toBeGreaterThan(0);
  const created = await user.call("POST", "/invoices", { clientId, lineItems: [line] });
  expect(created.status).toBe(201);
  const id = created.body.id;
  expect((await user.call("PATCH", `/invoices/${id}`, { notes: "n" })).status).toBe(200);
  expect((await user.call("GET", "/invoices")).status).toBe(200);
  expect((await user.call("POST", `/invoices/${id}/finalize`)).body.invoiceNumber).toBe("INV-000001");
  expect((await user.call("POST", `/invoices/${id}/send`)).body.status).toBe("sent");
  const paid = await user.call("POST", `/invoices/${id}/mark-paid`, { paymentMethod: "check" });
  expect(paid.body).toMatchObject({ status: "paid", amountPaid: "64.92" });
}

describe("transient faults are retried inside the request", () => {
  // Each operation once, the kinds taking turns (the SDK classifies them differently: throttling
  // with a longer backoff, 500 as transient), two in a row: below the SDK's four attempts.
  it.each(OPERATIONS.map((operation, i) => [TRANSIENT[i % TRANSIENT.length]!, operation] as const))(
    "%s twice on the first %s: every step of an invoice's life still succeeds",
    async (kind, operation) => {
      const { faulty } = await freshUser();
      const rule = world.proxy.inject({ match: (actual) => actual === operation, fault: kind, times: 2 });
      try {
        await lifecycle(faulty);
        expect(rule.hits).toBe(2);
      } finally {
        rule.remove();
      }
    },
  );

  it("transaction conflicts are retried by commit() with a fresh token", async () => {
    const { faulty } = await freshUser();
    let streak = 0;
    const rule = world.proxy.inject({
      match: op("TransactWriteItems"),
      fault: () => (streak++ % 3 < 2 ? "conflict" : undefined),
      times: Infinity,
    });
    try {
      await lifecycle(faulty);
      expect(rule.hits).toBeGreaterThanOrEqual(4);
    } finally {
      rule.remove();
    }
  });
});

describe("faults that do not pass: 503 service_unavailable with Retry-After, nothing half-written", () => {
  const GIVE_UP: FaultKind[] = ["throttle", "provisioned", "server-error", "conflict"];

  it.each(GIVE_UP)(
    "%s on every transaction: finalize answers 503, the draft and the counter are untouched",
    async (kind) => {
      const { direct, faulty } = await freshUser();
      const clientId = await client(direct);
      const id = await invoice(direct, clientId);
      const before = await partition(world.env.deps.db, direct.userId);
      const res = await withFault(
        kind,
        op("TransactWriteItems"),
        () => faulty.call("POST", `/invoices/${id}/finalize`),
        Infinity,
      );
      expectProblem(res, 503, "service_unavailable");
      problemShape(res);
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      // Everything is as it was.
      expect(await partition(world.env.deps.db, direct.userId)).toEqual(before);
      // Once DynamoDB is back, the same request succeeds and takes the first number.
      expect((await faulty.call("POST", `/invoices/${id}/finalize`)).body.invoiceNumber).toBe("INV-000001");
    },
  );

  it.each(["throttle", "server-error"] as FaultKind[])(
    "%s on every read: GET answers 503, and authentication 503, not 401",
    async (kind) => {
      const { direct, faulty } = await freshUser();
      const clientId = await client(direct);
      // A GET by id is one BatchGetItem holding the key item and the record (docs/auth.md).
      const read = await withFault(
        kind,
        op("BatchGetItem", "CLIENT#"),
        () => faulty.call("GET", `/clients/${clientId}`),
        Infinity,
      );
      expectProblem(read, 503, "service_unavailable");
      expect(read.headers.get("retry-after")).toMatch(/^\d+$/);
      const auth = await withFault(kind, op("GetItem", "APIKEY"), () => faulty.call("GET", "/clients"), Infinity);
      expectProblem(auth, 503, "service_unavailable");
    },
  );

  it("a write that keeps failing (mark-paid's transaction): 503, and the record is as before", async () => {
    const { direct, faulty } = await freshUser();
    const id = await invoice(direct, await client(direct), "sent");
    const before = await partition(world.env.deps.db, direct.userId);
    const res = await withFault(
      "throttle",
      op("TransactWriteItems", "INVOICE#"),
      () => faulty.call("POST", `/invoices/${id}/mark-paid`, { paymentMethod: "cash" }),
      Infinity,
    );
    expectProblem(res, 503, "service_unavailable");
    expect(await partition(world.env.deps.db, direct.userId)).toEqual(before);
  });
});

describe("a create that takes its id in its transaction, whose applied copy is met by its own resend", () => {
  // The transaction is applied but its response lost; the SDK's resend is then refused as a
  // conflict, so commit() sends the transaction again with a new token. That copy finds the id
  // counter already moved — by itself (docs/data-model.md, section 4): the create is done, not lost
  // to another writer, and must not take the next id for a second invoice.
  it.each([
    ["invoice", "/invoices", "INVOICE#"],
    ["estimate", "/estimates", "ESTIMATE#"],
    ["schedule", "/recurring-schedules", "SCHEDULE#"],
  ])("POST %s: 201 with the one record made, no second one", async (_kind, path, sk) => {
    const { direct, faulty } = await freshUser();
    const clientId = await client(direct);
    const body =
      path === "/recurring-schedules"
        ? { clientId, frequency: "monthly", startDate: "2099-01-01", lineItems: [line] }
        : { clientId, lineItems: [line] };
    const faults: FaultKind[] = ["reset-after-write", "conflict"];
    const rule = world.proxy.inject({
      match: op("TransactWriteItems", sk),
      fault: () => faults.shift(),
      times: Infinity,
    });
    let res: TestResponse;
    try {
      res = await faulty.call("POST", path, body);
    } finally {
      rule.remove();
    }
    expect(faults).toEqual([]); // both faults happened
    expect(res.status).toBe(201);
    expect(res.body.id).toBe(1);
    const list = await direct.call("GET", path);
    expect(list.body.map((r: { id: number }) => r.id)).toEqual([1]);
  });
});

describe("a retried idempotent request after an unknown outcome never duplicates", () => {
  it("POST /invoices whose every attempt lost its response: 503, the retry returns the one invoice made", async () => {
    const { direct, faulty } = await freshUser();
    const clientId = await client(direct);
    const headers = { "Idempotency-Key": "unknown-outcome-create" };
    const body = { clientId, lineItems: [line] };
    const first = await withFault(
      "timeout-after-write",
      op("TransactWriteItems", "INVOICE#"),
      () => faulty.call("POST", "/invoices", body, headers),
      Infinity,
    );
    expectProblem(first, 503, "service_unavailable");
    const retry = await faulty.call("POST", "/invoices", body, headers);
    expect(retry.status).toBe(201);
    expect(retry.headers.get("location")).toBe(`/invoices/${retry.body.id}`);
    const again = await faulty.call("POST", "/invoices", body, headers);
    expect(again.body).toEqual(retry.body);
    expect((await direct.call("GET", "/invoices")).body.map((i: { id: number }) => i.id)).toEqual([retry.body.id]);
  });

  it("finalize whose every attempt lost its response: the retry answers 200 with the number taken, no second number", async () => {
    const { direct, faulty } = await freshUser();
    const clientId = await client(direct);
    const [a, b] = [await invoice(direct, clientId), await invoice(direct, clientId)];
    const headers = { "Idempotency-Key": "unknown-outcome-finalize" };
    const first = await withFault(
      "timeout-after-write",
      op("TransactWriteItems", "INVOICE#"),
      () => faulty.call("POST", `/invoices/${a}/finalize`, undefined, headers),
      Infinity,
    );
    expectProblem(first, 503, "service_unavailable");
    const retry = await faulty.call("POST", `/invoices/${a}/finalize`, undefined, headers);
    expect(retry.status).toBe(200);
    expect(retry.body.invoiceNumber).toBe("INV-000001");
    expect((await direct.call("POST", `/invoices/${b}/finalize`)).body.invoiceNumber).toBe("INV-000002");
  });

  it("mark-paid with a key whose response was lost twice over: one payment recorded", async () => {
    const { direct, faulty } = await freshUser();
    const id = await invoice(direct, await client(direct), "sent");
    const headers = { "Idempotency-Key": "unknown-outcome-paid" };
    const body = { paymentMethod: "bank_transfer", reference: "T-1" };
    const first = await withFault(
      "reset-after-write",
      op("TransactWriteItems", "INVOICE#"),
      () => faulty.call("POST", `/invoices/${id}/mark-paid`, body, headers),
      Infinity,
    );
    expectProblem(first, 503, "service_unavailable");
    const retry = await faulty.call("POST", `/invoices/${id}/mark-paid`, body, headers);
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ status: "paid", amountPaid: "64.92", paymentReference: "T-1" });
    expect((await direct.call("GET", `/invoices/${id}/payments`)).body).toHaveLength(1);
  });
});

describe("scheduled jobs under random faults: each change exactly once", () => {
  /** Runs a job through the faulty client until a run completes (a run that gives up is simply run again, as the cron would). */
  async function runThroughFaults(name: JobName, seed: number): Promise<void> {
    const job = jobs[name]!;
    const deps = { ...world.env.deps, db: world.db };
    const rule = world.proxy.inject({ match: () => true, fault: chaos(prng(seed)), times: Infinity });
    try {
      for (let attempt = 1; ; attempt++) {
        // Two overlapping runs, as two cron ticks or a tick and `npm run jobs` may be.
        const runs = await Promise.allSettled([job(deps, world.env.clock.now), job(deps, world.env.clock.now)]);
        if (runs.some((r) => r.status === "fulfilled")) break;
        if (attempt >= 10) throw (runs[0] as PromiseRejectedResult).reason;
      }
    } finally {
      rule.remove();
    }
    await job(world.env.deps, world.env.clock.now); // and a clean run finishes whatever is left
  }

  it(
    "recurring: every daily occurrence generates one invoice, in order, none twice",
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer(), fc.integer({ min: 2, max: 8 }), async (seed, days) => {
          const { direct } = await freshUser();
          world.env.clock.set("2026-11-22T09:30:00.000Z");
          const clientId = await client(direct);
          const schedule = await direct.call("POST", "/recurring-schedules", {
            clientId,
            frequency: "daily",
            startDate: "2026-11-22",
            lineItems: [line],
          });
          expect(schedule.status).toBe(201);
          world.env.clock.advance(days * 86_400_000);
          await runThroughFaults("recurring", seed);

          const invoices = (await direct.call("GET", "/invoices?limit=200")).body as {
            recurringScheduleId: number;
            issueDate: string;
            total: string;
          }[];
          const issued = invoices
            .filter((i) => i.recurringScheduleId === schedule.body.id)
            .map((i) => i.issueDate)
            .sort();
          const expected = Array.from({ length: days + 1 }, (_, n) =>
            new Date(Date.parse("2026-11-22T00:00:00.000Z") + n * 86_400_000).toISOString(),
          );
          expect(issued).toEqual(expected);
          const after = await direct.call("GET", `/recurring-schedules/${schedule.body.id}`);
          expect(after.body.occurrencesGenerated).toBe(days + 1);
        }),
        { numRuns: Math.max(2, Math.ceil(RUNS / 10)) },
      );
    },
    180_000 + RUNS * 5_000, // never below the suite's 180 s: a limit catches a hang, it measures nothing
  );

  it(
    "overdue: every past-due sent invoice becomes overdue with one version step",
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer(), async (seed) => {
          const { direct } = await freshUser();
          world.env.clock.set("2026-11-22T09:30:00.000Z");
          const clientId = await client(direct);
          const ids = [
            await invoice(direct, clientId, "sent"),
            await invoice(direct, clientId, "sent"),
            await invoice(direct, clientId, "sent"),
          ];
          const etags = await Promise.all(
            ids.map(async (id) =>
              Number(JSON.parse((await direct.call("GET", `/invoices/${id}`)).headers.get("etag")!)),
            ),
          );
          world.env.clock.advance(40 * 86_400_000);
          await runThroughFaults("overdue", seed);
          for (const [i, id] of ids.entries()) {
            const now = await direct.call("GET", `/invoices/${id}`);
            expect(now.body.status).toBe("overdue");
            expect(Number(JSON.parse(now.headers.get("etag")!))).toBe(etags[i]! + 1);
          }
        }),
        { numRuns: Math.max(2, Math.ceil(RUNS / 10)) },
      );
    },
    180_000 + RUNS * 5_000, // never below the suite's 180 s: a limit catches a hang, it measures nothing
  );
});
