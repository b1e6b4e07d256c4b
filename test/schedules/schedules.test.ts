import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { jobs } from "@invoicing/core/jobs/all";
import { createTestEnv, expectProblem, type TestEnv, type TestUser } from "../support/env";
import { WIDGET, widgetLine } from "../support/line-items";

/**
 * The recurring schedule resource over HTTP: create, read, list, edit, delete,
 * pause / resume / cancel, and every input rule. The job's own behaviour is in recurring-job.test.ts.
 */
let env: TestEnv;
let alice: TestUser;
let acme: number; // EUR, 14 days, with email

beforeAll(async () => {
  env = await createTestEnv();
  alice = await env.user();
  acme = (
    await alice.call("POST", "/clients", {
      name: "Acme",
      email: "billing@acme.test",
      currency: "EUR",
      paymentTermsDays: 14,
    })
  ).body.id;
});

// Each test starts at the same instant; tests that move time set it themselves.
const NOW = "2026-11-22T09:30:00.000Z";
beforeEach(() => env.clock.set(NOW));

const line = { ...WIDGET, description: "Hosting" };
const FUTURE = "2026-12-01";

async function createSchedule(user: TestUser, body: Record<string, unknown>) {
  const res = await user.call("POST", "/recurring-schedules", {
    clientId: acme,
    frequency: "monthly",
    lineItems: [line],
    ...body,
  });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
  return res.body;
}

async function invoicesOf(user: TestUser, scheduleId: number) {
  const res = await user.call("GET", "/invoices?limit=200");
  expect(res.status).toBe(200);
  return (res.body as { recurringScheduleId: number | null; id: number }[])
    .filter((inv) => inv.recurringScheduleId === scheduleId)
    .sort((a, b) => a.id - b.id) as any[];
}

describe("POST /recurring-schedules", () => {
  it("with a future startDate: 201, Location, every field present, defaults from the client, no invoice yet", async () => {
    const res = await alice.call("POST", "/recurring-schedules", {
      clientId: acme,
      frequency: "monthly",
      startDate: FUTURE,
      lineItems: [line],
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("location")).toBe(`/recurring-schedules/${res.body.id}`);
    expect(res.headers.get("etag")).toBe('"1"');
    // Every field of the resource, null where there is no value: the key check names a missing or extra one.
    const expected = {
      id: res.body.id,
      clientId: acme,
      status: "active",
      frequency: "monthly",
      startDate: "2026-12-01T00:00:00.000Z",
      endDate: null,
      maxOccurrences: null,
      occurrencesGenerated: 0,
      nextRunAt: "2026-12-01T00:00:00.000Z",
      lastRunAt: null,
      lastInvoiceId: null,
      autoSend: false,
      paymentTermsDays: 14,
      currency: "EUR",
      notes: null,
      terms: null,
      taxExemptionReason: null,
      buyerReference: null,
      purchaseOrderReference: null,
      lineItems: [widgetLine({ description: "Hosting" })],
      subtotal: "59.97",
      taxTotal: "4.95",
      total: "64.92",
      taxBreakdown: [{ taxCategory: "standard", taxRate: "0.0825", taxableAmount: "59.97", taxAmount: "4.95" }],
      createdAt: NOW,
      updatedAt: NOW,
    };
    expect(Object.keys(res.body).sort()).toEqual(Object.keys(expected).sort());
    expect(res.body).toEqual(expected);
    expect(await invoicesOf(alice, res.body.id)).toEqual([]);
    const got = await alice.call("GET", `/recurring-schedules/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
    expect(got.headers.get("etag")).toBe('"1"');
  });

  it("without startDate: starts now and generates the first invoice in the same request", async () => {
    const s = await createSchedule(alice, {
      frequency: "weekly",
      notes: "Thanks",
      terms: "Net 14",
      currency: "USD",
      paymentTermsDays: 7,
    });
    expect(s).toMatchObject({
      startDate: NOW,
      occurrencesGenerated: 1,
      lastRunAt: NOW,
      nextRunAt: "2026-11-29T09:30:00.000Z",
      status: "active",
    });
    const invoices = await invoicesOf(alice, s.id);
    expect(invoices).toHaveLength(1);
    expect(s.lastInvoiceId).toBe(invoices[0].id);
    expect(invoices[0]).toMatchObject({
      status: "draft",
      recurringScheduleId: s.id,
      clientId: acme,
      clientName: "Acme",
      clientEmail: "billing@acme.test",
      currency: "USD",
      notes: "Thanks",
      terms: "Net 14",
      issueDate: NOW,
      dueDate: "2026-11-29T09:30:00.000Z",
      subtotal: "59.97",
      taxTotal: "4.95",
      total: "64.92",
      invoiceNumber: null,
      lineItems: [widgetLine({ description: "Hosting" })],
    });
  });

  it('"startDate": "<today>" anchors at today\'s midnight UTC and generates that occurrence at once', async () => {
    const s = await createSchedule(alice, { frequency: "daily", startDate: "2026-11-22" });
    expect(s).toMatchObject({
      startDate: "2026-11-22T00:00:00.000Z",
      occurrencesGenerated: 1,
      lastRunAt: "2026-11-22T00:00:00.000Z",
      nextRunAt: "2026-11-23T00:00:00.000Z",
    });
    const [invoice] = await invoicesOf(alice, s.id);
    expect(invoice.issueDate).toBe("2026-11-22T00:00:00.000Z");
    expect(invoice.dueDate).toBe("2026-12-06T00:00:00.000Z"); // + the client's 14 days
  });

  it("maxOccurrences 1 with an immediate start is completed within the creating request", async () => {
    const s = await createSchedule(alice, { maxOccurrences: 1 });
    expect(s).toMatchObject({ status: "completed", occurrencesGenerated: 1, nextRunAt: null, lastRunAt: NOW });
    expect(await invoicesOf(alice, s.id)).toHaveLength(1);
  });

  it("an endDate equal to an immediate startDate gives exactly that one invoice, then completed", async () => {
    const s = await createSchedule(alice, { startDate: "2026-11-22", endDate: "2026-11-22" });
    expect(s).toMatchObject({ status: "completed", occurrencesGenerated: 1, nextRunAt: null });
  });

  it("autoSend with an immediate start finalizes and sends the first invoice in the request", async () => {
    const s = await createSchedule(alice, { autoSend: true });
    const [invoice] = await invoicesOf(alice, s.id);
    expect(invoice).toMatchObject({ status: "sent", sentAt: NOW, issueDate: NOW });
    expect(invoice.invoiceNumber).toMatch(/^INV-\d{6}$/);
  });

  it("autoSend to a client without email leaves the first invoice finalized", async () => {
    const quiet = (await alice.call("POST", "/clients", { name: "No Mail" })).body.id;
    const s = await createSchedule(alice, { clientId: quiet, autoSend: true });
    const [invoice] = await invoicesOf(alice, s.id);
    expect(invoice.status).toBe("finalized");
    expect(invoice.invoiceNumber).toMatch(/^INV-\d{6}$/);
  });

  it("rejects bad input with 400 validation_error naming the field", async () => {
    const base = { clientId: acme, frequency: "monthly", lineItems: [line] };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, frequency: "fortnightly" }, "frequency"],
      [{ ...base, frequency: undefined }, "frequency"],
      [{ ...base, startDate: "2026-12-10", endDate: "2026-12-09" }, "endDate"],
      [{ ...base, endDate: "2026-11-22T09:29:59Z" }, "endDate"], // before the implied start (now)
      [{ ...base, startDate: "2026-11-21" }, "startDate"],
      [{ ...base, startDate: "2026-11-21T23:59:59Z" }, "startDate"],
      [{ ...base, startDate: "2026-02-30" }, "startDate"],
      [{ ...base, startDate: null }, "startDate"],
      [{ ...base, maxOccurrences: 0 }, "maxOccurrences"],
      [{ ...base, maxOccurrences: 1.5 }, "maxOccurrences"],
      [{ ...base, maxOccurrences: "3" }, "maxOccurrences"],
      [{ ...base, lineItems: [] }, "lineItems"],
      [{ ...base, lineItems: undefined }, "lineItems"],
      [{ ...base, lineItems: [{ ...line, quantity: "abc" }] }, "lineItems.0.quantity"],
      [{ ...base, lineItems: [{ ...line, unitPrice: "1.001" }] }, "lineItems.0.unitPrice"],
      [{ ...base, lineItems: [{ unitPrice: "1.00" }] }, "lineItems.0.description"],
      [{ ...base, currency: "XYZ" }, "currency"],
      [{ ...base, paymentTermsDays: "30" }, "paymentTermsDays"],
      [{ ...base, autoSend: "yes" }, "autoSend"],
      [{ ...base, status: "paused" }, "status"],
      [{ ...base, occurrencesGenerated: 0 }, "occurrencesGenerated"],
      [{ ...base, clientId: "1" }, "clientId"],
    ];
    const before = (await alice.call("GET", "/recurring-schedules?limit=200")).body.length;
    for (const [body, path] of cases) {
      const problem = expectProblem(await alice.call("POST", "/recurring-schedules", body), 400, "validation_error");
      expect(
        problem.errors!.map((e) => e.path),
        JSON.stringify(body),
      ).toContain(path);
    }
    expect((await alice.call("GET", "/recurring-schedules?limit=200")).body).toHaveLength(before); // nothing was created
  });

  it("an unknown client is 422 client_not_found, another user's client too", async () => {
    expectProblem(
      await alice.call("POST", "/recurring-schedules", { clientId: 999_999, frequency: "monthly", lineItems: [line] }),
      422,
      "client_not_found",
    );
    const bob = await env.user();
    expectProblem(
      await bob.call("POST", "/recurring-schedules", { clientId: acme, frequency: "monthly", lineItems: [line] }),
      422,
      "client_not_found",
    );
  });

  it("a body error wins over an unknown client (400 before 422)", async () => {
    expectProblem(
      await alice.call("POST", "/recurring-schedules", {
        clientId: 999_999,
        frequency: "monthly",
        lineItems: [line],
        startDate: "2020-01-01",
      }),
      400,
      "validation_error",
    );
  });
});

describe("GET /recurring-schedules", () => {
  it("lists newest first with status and clientId filters and Link pagination", async () => {
    const bob = await env.user();
    const c1 = (await bob.call("POST", "/clients", { name: "One" })).body.id;
    const c2 = (await bob.call("POST", "/clients", { name: "Two" })).body.id;
    const mk = (clientId: number) =>
      bob.call("POST", "/recurring-schedules", { clientId, frequency: "daily", startDate: FUTURE, lineItems: [line] });
    const ids: number[] = [];
    for (const c of [c1, c2, c1, c2, c1]) ids.push((await mk(c)).body.id);
    await bob.call("POST", `/recurring-schedules/${ids[0]}/pause`);
    await bob.call("POST", `/recurring-schedules/${ids[1]}/cancel`);

    const all = await bob.call("GET", "/recurring-schedules");
    expect(all.body.map((s: { id: number }) => s.id)).toEqual([...ids].reverse());
    const paused = await bob.call("GET", "/recurring-schedules?status=paused");
    expect(paused.body.map((s: { id: number }) => s.id)).toEqual([ids[0]]);
    const ofC1 = await bob.call("GET", `/recurring-schedules?clientId=${c1}`);
    expect(ofC1.body.map((s: { id: number }) => s.id)).toEqual([ids[4], ids[2], ids[0]]);
    const activeOfC2 = await bob.call("GET", `/recurring-schedules?clientId=${c2}&status=active`);
    expect(activeOfC2.body.map((s: { id: number }) => s.id)).toEqual([ids[3]]);

    const page1 = await bob.call("GET", "/recurring-schedules?limit=2");
    expect(page1.body.map((s: { id: number }) => s.id)).toEqual([ids[4], ids[3]]);
    const link = page1.headers.get("link")!;
    expect(link).toMatch(/rel="next"/);
    const next = new URL(/<([^>]+)>/.exec(link)![1]!);
    const page2 = await bob.call("GET", `${next.pathname}${next.search}`);
    expect(page2.body.map((s: { id: number }) => s.id)).toEqual([ids[2], ids[1]]);

    expect((await bob.call("GET", "/recurring-schedules?clientId=999999")).body).toEqual([]); // no such client
    expectProblem(await bob.call("GET", "/recurring-schedules?status=done"), 400, "validation_error");
    expectProblem(await bob.call("GET", "/recurring-schedules?limit=201"), 400, "validation_error");
  });
});

describe("tenancy", () => {
  it("another user's schedule is 404 on every endpoint, and stays unchanged", async () => {
    const s = await createSchedule(alice, { startDate: FUTURE });
    const mallory = await env.user();
    const path = `/recurring-schedules/${s.id}`;
    expectProblem(await mallory.call("GET", path), 404, "not_found");
    expectProblem(await mallory.call("PATCH", path, { notes: "mine" }), 404, "not_found");
    expectProblem(await mallory.call("DELETE", path), 404, "not_found");
    for (const action of ["pause", "resume", "cancel"])
      expectProblem(await mallory.call("POST", `${path}/${action}`), 404, "not_found");
    expect((await mallory.call("GET", "/recurring-schedules")).body).toEqual([]);
    expect((await alice.call("GET", path)).body).toEqual(s);
    expectProblem(await alice.call("GET", "/recurring-schedules/0"), 400, "validation_error");
    expectProblem(await alice.call("GET", "/recurring-schedules/999999"), 404, "not_found");
  });
});

describe("PATCH /recurring-schedules/{id}", () => {
  it("edits the template at any time; new lines get new ids and totals; {} changes nothing", async () => {
    const s = await createSchedule(alice, {}); // first invoice generated now
    env.clock.set("2026-11-22T10:00:00.000Z");
    const res = await alice.call("PATCH", `/recurring-schedules/${s.id}`, {
      notes: "New notes",
      terms: null,
      currency: "GBP",
      paymentTermsDays: 30,
      autoSend: true,
      lineItems: [
        { description: "A", unitPrice: "10.00" },
        { description: "B", quantity: 2, unitPrice: 5, taxRate: "0.5" },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).toBe('"2"');
    expect(res.body).toMatchObject({
      notes: "New notes",
      terms: null,
      currency: "GBP",
      paymentTermsDays: 30,
      autoSend: true,
      subtotal: "20.00",
      taxTotal: "5.00",
      total: "25.00",
      updatedAt: "2026-11-22T10:00:00.000Z",
      createdAt: NOW,
      occurrencesGenerated: 1,
      nextRunAt: s.nextRunAt,
      status: "active",
    });
    expect(res.body.lineItems.map((l: { id: number }) => l.id)).toEqual([2, 3]);
    const same = await alice.call("PATCH", `/recurring-schedules/${s.id}`, {});
    expect(same.body).toEqual(res.body);
    expect(same.headers.get("etag")).toBe('"2"');
    // The invoice already generated keeps the template it was made from.
    const [invoice] = await invoicesOf(alice, s.id);
    expect(invoice).toMatchObject({ currency: "EUR", total: "64.92", notes: null });
  });

  it("frequency, startDate and clientId only before the first invoice; the same value is not a change", async () => {
    const other = (await alice.call("POST", "/clients", { name: "Other" })).body.id;
    const started = await createSchedule(alice, {});
    for (const body of [{ frequency: "weekly" }, { startDate: "2026-12-24" }, { clientId: other }]) {
      expectProblem(
        await alice.call("PATCH", `/recurring-schedules/${started.id}`, body),
        422,
        "schedule_not_editable",
      );
    }
    const unchanged = await alice.call("PATCH", `/recurring-schedules/${started.id}`, {
      frequency: "monthly",
      clientId: acme,
      notes: "x",
    });
    expect(unchanged.status).toBe(200);

    const pending = await createSchedule(alice, { startDate: FUTURE });
    const moved = await alice.call("PATCH", `/recurring-schedules/${pending.id}`, {
      frequency: "quarterly",
      startDate: "2027-01-31",
      clientId: other,
    });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({
      frequency: "quarterly",
      startDate: "2027-01-31T00:00:00.000Z",
      nextRunAt: "2027-01-31T00:00:00.000Z",
      clientId: other,
      occurrencesGenerated: 0,
    });
    expect(
      (await alice.call("GET", `/recurring-schedules?clientId=${other}`)).body.map((x: { id: number }) => x.id),
    ).toContain(pending.id);
  });

  it("validates dates: startDate before today and endDate before startDate are 400", async () => {
    const s = await createSchedule(alice, { startDate: "2026-12-10" });
    const path = `/recurring-schedules/${s.id}`;
    expectProblem(await alice.call("PATCH", path, { startDate: "2026-11-21" }), 400, "validation_error");
    expectProblem(await alice.call("PATCH", path, { endDate: "2026-12-09" }), 400, "validation_error");
    expectProblem(
      await alice.call("PATCH", path, { startDate: "2026-12-20", endDate: "2026-12-19" }),
      400,
      "validation_error",
    );
    expectProblem(await alice.call("PATCH", path, { maxOccurrences: 0 }), 400, "validation_error");
    expectProblem(await alice.call("PATCH", path, { lineItems: [] }), 400, "validation_error");
    expectProblem(await alice.call("PATCH", path, { status: "paused" }), 400, "validation_error");
    expectProblem(await alice.call("PATCH", path, { nextRunAt: null }), 400, "validation_error");
    // The stored endDate is checked against a new startDate too.
    await alice.call("PATCH", path, { endDate: "2026-12-31" });
    expectProblem(await alice.call("PATCH", path, { startDate: "2027-01-05" }), 400, "validation_error");
    const ok = await alice.call("PATCH", path, { endDate: null, maxOccurrences: 5 });
    expect(ok.body).toMatchObject({ endDate: null, maxOccurrences: 5, status: "active" });
  });

  it("a maxOccurrences already reached, or an endDate before the next occurrence, completes the schedule", async () => {
    const a = await createSchedule(alice, {}); // 1 invoice, next 2026-12-22
    const byMax = await alice.call("PATCH", `/recurring-schedules/${a.id}`, { maxOccurrences: 1 });
    expect(byMax.body).toMatchObject({ status: "completed", nextRunAt: null, maxOccurrences: 1 });
    expectProblem(
      await alice.call("PATCH", `/recurring-schedules/${a.id}`, { notes: "late" }),
      422,
      "schedule_not_editable",
    );

    const b = await createSchedule(alice, {});
    const byEnd = await alice.call("PATCH", `/recurring-schedules/${b.id}`, { endDate: "2026-12-21T23:59:59Z" });
    expect(byEnd.body).toMatchObject({ status: "completed", nextRunAt: null });

    const c = await createSchedule(alice, {});
    const atEnd = await alice.call("PATCH", `/recurring-schedules/${c.id}`, { endDate: "2026-12-22T09:30:00Z" });
    expect(atEnd.body).toMatchObject({ status: "active", nextRunAt: "2026-12-22T09:30:00.000Z" });
  });

  it("honours If-Match (412 on a stale ETag) and refuses completed or cancelled schedules", async () => {
    const s = await createSchedule(alice, { startDate: FUTURE });
    const path = `/recurring-schedules/${s.id}`;
    expectProblem(await alice.call("PATCH", path, { notes: "a" }, { "If-Match": '"7"' }), 412, "precondition_failed");
    expect((await alice.call("PATCH", path, { notes: "a" }, { "If-Match": '"1"' })).status).toBe(200);
    await alice.call("POST", `${path}/cancel`);
    expectProblem(await alice.call("PATCH", path, { notes: "b" }), 422, "schedule_not_editable");
    expectProblem(await alice.call("PATCH", path, {}), 422, "schedule_not_editable");
  });
});

describe("DELETE /recurring-schedules/{id}", () => {
  it("204; its invoices stay; the client reference goes with it", async () => {
    const client = (await alice.call("POST", "/clients", { name: "Short-lived" })).body.id;
    const pending = await createSchedule(alice, { clientId: client, startDate: FUTURE });
    expectProblem(await alice.call("DELETE", `/clients/${client}`), 422, "client_in_use");
    expect((await alice.call("DELETE", `/recurring-schedules/${pending.id}`)).status).toBe(204);
    expectProblem(await alice.call("GET", `/recurring-schedules/${pending.id}`), 404, "not_found");
    expectProblem(await alice.call("DELETE", `/recurring-schedules/${pending.id}`), 404, "not_found");
    expect((await alice.call("DELETE", `/clients/${client}`)).status).toBe(204);

    const client2 = (await alice.call("POST", "/clients", { name: "Billed" })).body.id;
    const started = await createSchedule(alice, { clientId: client2 });
    expect((await alice.call("DELETE", `/recurring-schedules/${started.id}`)).status).toBe(204);
    const invoice = await alice.call("GET", `/invoices/${started.lastInvoiceId}`);
    expect(invoice.body).toMatchObject({ status: "draft", recurringScheduleId: started.id });
    expectProblem(await alice.call("DELETE", `/clients/${client2}`), 422, "client_in_use"); // the invoice's reference
    expect((await alice.call("DELETE", `/invoices/${started.lastInvoiceId}`)).status).toBe(204);
    expect((await alice.call("DELETE", `/clients/${client2}`)).status).toBe(204);
  });

  it("a clientId change moves the reference: the old client becomes deletable", async () => {
    const c1 = (await alice.call("POST", "/clients", { name: "Old" })).body.id;
    const c2 = (await alice.call("POST", "/clients", { name: "New" })).body.id;
    const s = await createSchedule(alice, { clientId: c1, startDate: FUTURE });
    await alice.call("PATCH", `/recurring-schedules/${s.id}`, { clientId: c2 });
    expect((await alice.call("DELETE", `/clients/${c1}`)).status).toBe(204);
    expectProblem(await alice.call("DELETE", `/clients/${c2}`), 422, "client_in_use");
    expectProblem(await alice.call("PATCH", `/recurring-schedules/${s.id}`, { clientId: c1 }), 422, "client_not_found");
  });
});

describe("pause / resume / cancel", () => {
  it("walks active → paused → active → cancelled; wrong states are 422 invalid_transition", async () => {
    const s = await createSchedule(alice, { startDate: FUTURE });
    const path = `/recurring-schedules/${s.id}`;
    expectProblem(await alice.call("POST", `${path}/resume`), 422, "invalid_transition");
    const paused = await alice.call("POST", `${path}/pause`);
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ status: "paused", nextRunAt: "2026-12-01T00:00:00.000Z" });
    expectProblem(await alice.call("POST", `${path}/pause`), 422, "invalid_transition");
    expectProblem(await alice.call("POST", `${path}/pause`, { reason: "x" }), 400, "validation_error");
    const resumed = await alice.call("POST", `${path}/resume`);
    expect(resumed.body).toMatchObject({
      status: "active",
      nextRunAt: "2026-12-01T00:00:00.000Z",
      occurrencesGenerated: 0,
    });
    const cancelled = await alice.call("POST", `${path}/cancel`);
    expect(cancelled.body).toMatchObject({ status: "cancelled", nextRunAt: null });
    for (const action of ["pause", "resume", "cancel"])
      expectProblem(await alice.call("POST", `${path}/${action}`), 422, "invalid_transition");

    const completed = await createSchedule(alice, { maxOccurrences: 1 });
    for (const action of ["pause", "resume", "cancel"]) {
      expectProblem(
        await alice.call("POST", `/recurring-schedules/${completed.id}/${action}`),
        422,
        "invalid_transition",
      );
    }
    const pausedThenCancelled = await createSchedule(alice, { startDate: FUTURE });
    await alice.call("POST", `/recurring-schedules/${pausedThenCancelled.id}/pause`);
    expect((await alice.call("POST", `/recurring-schedules/${pausedThenCancelled.id}/cancel`)).body.status).toBe(
      "cancelled",
    );
  });

  it("resume skips the occurrences missed while paused, uncounted, and continues at the first one at or after now", async () => {
    // Its own table: the job must see only this schedule, not every other test's.
    const own = await createTestEnv({ now: "2027-01-31T08:00:00.000Z" });
    const carol = await own.user();
    const client = (await carol.call("POST", "/clients", { name: "Carol's client" })).body.id;
    const s = (
      await carol.call("POST", "/recurring-schedules", {
        clientId: client,
        frequency: "monthly",
        startDate: "2027-01-31",
        lineItems: [line],
      })
    ).body;
    expect(s.occurrencesGenerated).toBe(1); // Jan 31, at once
    await carol.call("POST", `/recurring-schedules/${s.id}/pause`);
    // The job, while paused, generates nothing.
    const idle = await jobs.recurring!(own.deps, new Date("2027-03-15T00:00:00.000Z"));
    expect(idle.changed).toBe(0);
    expect(await invoicesOf(carol, s.id)).toHaveLength(1);

    own.clock.set("2027-04-10T12:00:00.000Z");
    const resumed = await carol.call("POST", `/recurring-schedules/${s.id}/resume`);
    // Feb 28 and Mar 31 are skipped; Apr 30 is next (clamped from the 31st, not from Feb's 28th).
    expect(resumed.body).toMatchObject({
      status: "active",
      occurrencesGenerated: 1,
      nextRunAt: "2027-04-30T00:00:00.000Z",
      lastRunAt: "2027-01-31T00:00:00.000Z",
    });
    const run = await jobs.recurring!(own.deps, new Date("2027-06-01T00:00:00.000Z"));
    expect(run).toMatchObject({ job: "recurring", changed: 2, generated: 2 });
    const dates = (await invoicesOf(carol, s.id)).map((i) => i.issueDate);
    expect(dates).toEqual(["2027-01-31T00:00:00.000Z", "2027-04-30T00:00:00.000Z", "2027-05-31T00:00:00.000Z"]);
    const after = (await carol.call("GET", `/recurring-schedules/${s.id}`)).body;
    expect(after).toMatchObject({ occurrencesGenerated: 3, nextRunAt: "2027-06-30T00:00:00.000Z" });
  });

  it("resume exactly at an occurrence keeps that occurrence; past endDate it completes", async () => {
    env.clock.set("2027-01-01T00:00:00.000Z");
    const s = await createSchedule(alice, { frequency: "weekly", startDate: "2027-01-01", endDate: "2027-01-20" });
    await alice.call("POST", `/recurring-schedules/${s.id}/pause`);
    env.clock.set("2027-01-15T00:00:00.000Z");
    const atOccurrence = await alice.call("POST", `/recurring-schedules/${s.id}/resume`);
    expect(atOccurrence.body).toMatchObject({ status: "active", nextRunAt: "2027-01-15T00:00:00.000Z" });
    await alice.call("POST", `/recurring-schedules/${s.id}/pause`);
    env.clock.set("2027-01-15T00:00:00.001Z");
    const pastEnd = await alice.call("POST", `/recurring-schedules/${s.id}/resume`);
    expect(pastEnd.body).toMatchObject({ status: "completed", nextRunAt: null, occurrencesGenerated: 1 });
  });

  it("a paused schedule can still be edited; two concurrent pauses: one 200, one 422", async () => {
    const s = await createSchedule(alice, { startDate: FUTURE });
    const results = await Promise.all([1, 2, 3].map(() => alice.call("POST", `/recurring-schedules/${s.id}/pause`)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of results.filter((r) => r.status !== 200)) expectProblem(r, 422, "invalid_transition");
    const edited = await alice.call("PATCH", `/recurring-schedules/${s.id}`, { notes: "while paused" });
    expect(edited.body).toMatchObject({ status: "paused", notes: "while paused" });
  });
});

describe("idempotent creation", () => {
  it("a repeated POST with the same Idempotency-Key makes one schedule and one first invoice", async () => {
    const key = { "Idempotency-Key": `sched-${Math.random().toString(36).slice(2)}` };
    const body = { clientId: acme, frequency: "monthly", lineItems: [line], notes: "idem" };
    const first = await alice.call("POST", "/recurring-schedules", body, key);
    const again = await alice.call("POST", "/recurring-schedules", body, key);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await invoicesOf(alice, first.body.id)).toHaveLength(1);
  });
});
