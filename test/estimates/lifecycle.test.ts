import { beforeAll, describe, expect, it } from "vitest";
import { createTestEnv, expectProblem, type TestEnv, type TestUser } from "../support/env";
import { WIDGET, widgetLine } from "../support/line-items";

/** Estimates over HTTP: the resource, its lifecycle, edits and every 422. */

let env: TestEnv;
let alice: TestUser;
let acme: number;

const NOW = "2026-11-22T09:30:00.000Z";
const setup = { description: "Setup", unitPrice: 100, taxRate: 0.1 };

beforeAll(async () => {
  env = await createTestEnv({ now: NOW });
  alice = await env.user();
  acme = (await alice.call("POST", "/clients", { name: "Acme", email: "billing@acme.test", currency: "EUR" })).body.id;
});

async function newClient(user: TestUser, fields: Record<string, unknown> = {}): Promise<number> {
  const res = await user.call("POST", "/clients", { name: "Client", email: "c@example.test", ...fields });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function newEstimate(user: TestUser, body: Record<string, unknown>) {
  const res = await user.call("POST", "/estimates", body);
  expect(res.status, res.text).toBe(201);
  return res.body as Record<string, any>;
}

async function estimateIn(
  status: "draft" | "sent" | "accepted" | "declined" | "converted" | "expired",
  clientId = acme,
) {
  const est = await newEstimate(alice, { clientId, lineItems: [WIDGET], validUntil: "2026-12-01" });
  const go = (action: string) => alice.call("POST", `/estimates/${est.id}/${action}`);
  if (status !== "draft") expect((await go("send")).status).toBe(200);
  if (status === "accepted") expect((await go("accept")).status).toBe(200);
  if (status === "declined") expect((await go("decline")).status).toBe(200);
  if (status === "converted") expect((await go("convert")).status).toBe(201);
  if (status === "expired") {
    const { jobs } = await import("@invoicing/core/jobs/all");
    await jobs["expire-estimates"]!(env.deps, new Date("2026-12-01T00:00:00.001Z"));
  }
  const current = await alice.call("GET", `/estimates/${est.id}`);
  expect(current.body.status).toBe(status);
  return current.body as { id: number; version: never };
}

describe("estimate resource", () => {
  it("creates a draft with every field present, exact totals, ETag and Location", async () => {
    const bob = await env.user();
    const client = await newClient(bob, { name: "Bob's client", email: "pay@bob.test", currency: "GBP" });
    const res = await bob.call("POST", "/estimates", { clientId: client, lineItems: [WIDGET, setup], notes: "Thanks" });
    expect(res.status).toBe(201);
    expect(res.headers.get("location")).toBe(`/estimates/${res.body.id}`);
    expect(res.headers.get("etag")).toBe('"1"');
    expect(res.body).toEqual({
      id: 1,
      clientId: client,
      estimateNumber: "EST-000001",
      status: "draft",
      currency: "GBP",
      subtotal: "159.97",
      taxTotal: "14.95",
      total: "174.92",
      notes: "Thanks",
      terms: null,
      validUntil: null,
      convertedInvoiceId: null,
      clientName: "Bob's client",
      clientEmail: "pay@bob.test",
      lineItems: [
        widgetLine(),
        {
          id: 2,
          description: "Setup",
          quantity: "1.00",
          unitPrice: "100.00",
          taxRate: "0.10",
          taxCategory: "standard",
          amount: "100.00",
          sortOrder: 1,
        },
      ],
      publicToken: expect.stringMatching(/^[A-Za-z0-9_-]{22,}$/),
      taxBreakdown: [
        { taxCategory: "standard", taxRate: "0.10", taxableAmount: "100.00", taxAmount: "10.00" },
        { taxCategory: "standard", taxRate: "0.0825", taxableAmount: "59.97", taxAmount: "4.95" },
      ],
      taxExemptionReason: null,
      clientAddress: null,
      clientTaxId: null,
      seller: null,
      createdAt: NOW,
      updatedAt: NOW,
    });
    const got = await bob.call("GET", `/estimates/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.headers.get("etag")).toBe('"1"');
    expect(got.body).toEqual(res.body);
  });

  it("numbers estimates EST-000001, EST-000002, … per user, at creation, never reused after a delete", async () => {
    const carol = await env.user();
    const client = await newClient(carol);
    const first = await newEstimate(carol, { clientId: client });
    const second = await newEstimate(carol, { clientId: client });
    expect([first.estimateNumber, second.estimateNumber]).toEqual(["EST-000001", "EST-000002"]);
    expect((await carol.call("DELETE", `/estimates/${second.id}`)).status).toBe(204);
    const third = await newEstimate(carol, { clientId: client });
    expect(third.estimateNumber).toBe("EST-000003");
    const dave = await env.user();
    expect((await newEstimate(dave, { clientId: await newClient(dave) })).estimateNumber).toBe("EST-000001");
  });

  it("takes currency from the client unless given, and normalises validUntil", async () => {
    const est = await newEstimate(alice, { clientId: acme, validUntil: "2026-12-24T18:00:00+02:00" });
    expect(est.currency).toBe("EUR");
    expect(est.validUntil).toBe("2026-12-24T16:00:00.000Z");
    const usd = await newEstimate(alice, { clientId: acme, currency: "USD", validUntil: "2026-12-24" });
    expect(usd.currency).toBe("USD");
    expect(usd.validUntil).toBe("2026-12-24T00:00:00.000Z");
  });

  it("another user's estimate is 404 on every endpoint, exactly like a missing one", async () => {
    const est = await newEstimate(alice, { clientId: acme, lineItems: [WIDGET] });
    const mallory = await env.user();
    const mClient = await newClient(mallory);
    for (const id of [est.id, 999_999]) {
      expectProblem(await mallory.call("GET", `/estimates/${id}`), 404, "not_found");
      expectProblem(
        await mallory.call("PATCH", `/estimates/${id}`, { notes: "x", clientId: mClient }),
        404,
        "not_found",
      );
      expectProblem(await mallory.call("DELETE", `/estimates/${id}`), 404, "not_found");
      for (const action of ["send", "accept", "decline", "convert"]) {
        expectProblem(await mallory.call("POST", `/estimates/${id}/${action}`), 404, "not_found");
      }
    }
    expect(await mallory.call("GET", "/estimates")).toMatchObject({ status: 200, body: [] });
    const still = await alice.call("GET", `/estimates/${est.id}`);
    expect(still.body).toMatchObject({ status: "draft", notes: null, clientId: acme });
  });
});

describe("estimate lifecycle", () => {
  it("walks draft → sent → accepted → converted into a draft invoice that copies the estimate", async () => {
    const est = await newEstimate(alice, {
      clientId: acme,
      lineItems: [setup],
      notes: "N",
      terms: "T",
      validUntil: "2026-12-31",
    });
    // Replace the lines so the estimate's line ids (2, 3) differ from the invoice's fresh ones (1, 2).
    const patched = await alice.call("PATCH", `/estimates/${est.id}`, { lineItems: [WIDGET, setup] });
    expect(patched.body.lineItems.map((l: { id: number }) => l.id)).toEqual([2, 3]);

    env.clock.set("2026-11-23T10:00:00.000Z");
    const sent = await alice.call("POST", `/estimates/${est.id}/send`);
    expect(sent.status).toBe(200);
    expect(sent.headers.get("etag")).toBe('"3"');
    expect(sent.body).toMatchObject({
      status: "sent",
      updatedAt: "2026-11-23T10:00:00.000Z",
      convertedInvoiceId: null,
    });
    // Exactly the resource's fields: what send records for itself (recipient, expiry keys) stays inside.
    expect(Object.keys(sent.body).sort()).toEqual(Object.keys(est).sort());
    const accepted = await alice.call("POST", `/estimates/${est.id}/accept`, {});
    expect(accepted.status).toBe(200);
    expect(accepted.body.status).toBe("accepted");

    const converted = await alice.call("POST", `/estimates/${est.id}/convert`);
    expect(converted.status).toBe(201);
    const invoice = converted.body;
    expect(converted.headers.get("location")).toBe(`/invoices/${invoice.id}`);
    expect(converted.headers.get("etag")).toBe('"1"');
    expect(invoice).toMatchObject({
      status: "draft",
      invoiceNumber: null,
      estimateId: est.id,
      recurringScheduleId: null,
      clientId: acme,
      clientName: "Acme",
      clientEmail: "billing@acme.test",
      currency: "EUR",
      notes: "N",
      terms: "T",
      subtotal: "159.97",
      taxTotal: "14.95",
      total: "174.92",
      amountPaid: "0.00",
      issueDate: null,
      dueDate: null,
    });
    expect(invoice.lineItems).toEqual(
      patched.body.lineItems.map((line: object, i: number) => ({ ...line, id: i + 1, sortOrder: i })),
    );
    expect(invoice.publicToken).not.toBe(est.publicToken);
    expect((await alice.call("GET", `/invoices/${invoice.id}`)).body).toEqual(invoice);

    const after = await alice.call("GET", `/estimates/${est.id}`);
    expect(after.body).toMatchObject({
      status: "converted",
      convertedInvoiceId: invoice.id,
      updatedAt: "2026-11-23T10:00:00.000Z",
    });
    env.clock.set(NOW);
  });

  it("converts a draft or a sent estimate as well, and declines a sent one", async () => {
    for (const status of ["draft", "sent"] as const) {
      const est = await estimateIn(status);
      const res = await alice.call("POST", `/estimates/${est.id}/convert`, {});
      expect(res.status).toBe(201);
      expect(res.body.estimateId).toBe(est.id);
    }
    const declined = await estimateIn("declined");
    expect(declined).toMatchObject({ status: "declined", convertedInvoiceId: null });
  });

  it("send needs a recipient: `to`, else the client's email taken at send time", async () => {
    const silent = await newClient(alice, { email: null, name: "No mail" });
    const est = await newEstimate(alice, { clientId: silent, lineItems: [WIDGET] });
    expectProblem(await alice.call("POST", `/estimates/${est.id}/send`), 422, "client_email_missing");
    expect((await alice.call("GET", `/estimates/${est.id}`)).body.status).toBe("draft");
    const withTo = await alice.call("POST", `/estimates/${est.id}/send`, { to: "someone@else.test" });
    expect(withTo.status).toBe(200);
    expect(withTo.body.status).toBe("sent");

    const renamed = await newClient(alice, { email: null, name: "Old name" });
    const later = await newEstimate(alice, { clientId: renamed });
    expect(later.clientEmail).toBeNull();
    await alice.call("PATCH", `/clients/${renamed}`, { name: "New name", email: "new@mail.test" });
    const sent = await alice.call("POST", `/estimates/${later.id}/send`);
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ clientName: "New name", clientEmail: "new@mail.test" });
  });
});

describe("every 422 of an estimate", () => {
  it("invalid_transition for an action its status does not allow", async () => {
    const draft = await estimateIn("draft");
    for (const action of ["accept", "decline"]) {
      expectProblem(await alice.call("POST", `/estimates/${draft.id}/${action}`), 422, "invalid_transition");
    }
    const sent = await estimateIn("sent");
    expectProblem(await alice.call("POST", `/estimates/${sent.id}/send`), 422, "invalid_transition");
    const accepted = await estimateIn("accepted");
    for (const action of ["send", "accept", "decline"]) {
      expectProblem(await alice.call("POST", `/estimates/${accepted.id}/${action}`), 422, "invalid_transition");
    }
    const declined = await estimateIn("declined");
    for (const action of ["send", "accept", "decline", "convert"]) {
      expectProblem(await alice.call("POST", `/estimates/${declined.id}/${action}`), 422, "invalid_transition");
    }
    const expired = await estimateIn("expired");
    for (const action of ["send", "accept", "decline", "convert"]) {
      expectProblem(await alice.call("POST", `/estimates/${expired.id}/${action}`), 422, "invalid_transition");
    }
  });

  it("already_converted for a second convert, and no second invoice", async () => {
    const est = await estimateIn("converted");
    const before = await alice.call("GET", `/invoices?clientId=${acme}&limit=200`);
    const again = expectProblem(await alice.call("POST", `/estimates/${est.id}/convert`), 422, "already_converted");
    expect(again.detail).toContain(String((await alice.call("GET", `/estimates/${est.id}`)).body.convertedInvoiceId));
    for (const action of ["send", "accept", "decline"]) {
      expectProblem(await alice.call("POST", `/estimates/${est.id}/${action}`), 422, "invalid_transition");
    }
    const after = await alice.call("GET", `/invoices?clientId=${acme}&limit=200`);
    expect(after.body.length).toBe(before.body.length);
  });

  it("estimate_not_editable: PATCH unless draft or sent, DELETE of accepted or converted", async () => {
    for (const status of ["accepted", "declined", "expired", "converted"] as const) {
      const est = await estimateIn(status);
      expectProblem(await alice.call("PATCH", `/estimates/${est.id}`, { notes: "late" }), 422, "estimate_not_editable");
      // `{}` changes nothing, but an estimate that cannot be edited still says so.
      expectProblem(await alice.call("PATCH", `/estimates/${est.id}`, {}), 422, "estimate_not_editable");
    }
    for (const status of ["accepted", "converted"] as const) {
      const est = await estimateIn(status);
      expectProblem(await alice.call("DELETE", `/estimates/${est.id}`), 422, "estimate_not_editable");
      expect((await alice.call("GET", `/estimates/${est.id}`)).body.status).toBe(status);
    }
    for (const status of ["draft", "sent", "declined", "expired"] as const) {
      const est = await estimateIn(status);
      expect((await alice.call("DELETE", `/estimates/${est.id}`)).status).toBe(204);
      expectProblem(await alice.call("GET", `/estimates/${est.id}`), 404, "not_found");
      expectProblem(await alice.call("DELETE", `/estimates/${est.id}`), 404, "not_found");
    }
  });

  it("client_not_found for a clientId that is not one of the user's clients", async () => {
    expectProblem(await alice.call("POST", "/estimates", { clientId: 987_654 }), 422, "client_not_found");
    const est = await estimateIn("draft");
    expectProblem(
      await alice.call("PATCH", `/estimates/${est.id}`, { clientId: 987_654, notes: "x" }),
      422,
      "client_not_found",
    );
    expect((await alice.call("GET", `/estimates/${est.id}`)).body).toMatchObject({ clientId: acme, notes: null });
  });

  it("precondition order: 400 before 404 before 412 before 422", async () => {
    expectProblem(await alice.call("PATCH", "/estimates/999999", { status: "sent" }), 400, "validation_error");
    expectProblem(
      await alice.call("PATCH", "/estimates/999999", { notes: "x" }, { "If-Match": '"1"' }),
      404,
      "not_found",
    );
    const accepted = await estimateIn("accepted");
    expectProblem(
      await alice.call("PATCH", `/estimates/${accepted.id}`, { notes: "x" }, { "If-Match": '"1"' }),
      412,
      "precondition_failed",
    );
    expectProblem(
      await alice.call("POST", `/estimates/${accepted.id}/convert`, { now: true }),
      400,
      "validation_error",
    );
  });
});

describe("PATCH of an estimate", () => {
  it("edits a draft and a sent estimate with the invoice rules", async () => {
    const est = await newEstimate(alice, { clientId: acme, lineItems: [WIDGET], notes: "first", terms: "t" });
    env.clock.set("2026-11-22T10:00:00.000Z");
    const empty = await alice.call("PATCH", `/estimates/${est.id}`, {});
    expect(empty.status).toBe(200);
    expect(empty.headers.get("etag")).toBe('"1"');
    expect(empty.body).toEqual(est);

    const other = await newClient(alice, { name: "Globex", email: "ap@globex.test", currency: "JPY" });
    const moved = await alice.call("PATCH", `/estimates/${est.id}`, {
      clientId: other,
      notes: null,
      validUntil: "2026-12-15",
      lineItems: [setup, WIDGET, setup],
    });
    expect(moved.status).toBe(200);
    expect(moved.headers.get("etag")).toBe('"2"');
    expect(moved.body).toMatchObject({
      clientId: other,
      clientName: "Globex",
      clientEmail: "ap@globex.test",
      currency: "EUR",
      notes: null,
      terms: "t",
      validUntil: "2026-12-15T00:00:00.000Z",
      subtotal: "259.97",
      taxTotal: "24.95",
      total: "284.92",
      estimateNumber: est.estimateNumber,
      createdAt: NOW,
      updatedAt: "2026-11-22T10:00:00.000Z",
    });
    expect(moved.body.lineItems.map((l: { id: number; sortOrder: number }) => [l.id, l.sortOrder])).toEqual([
      [2, 0],
      [3, 1],
      [4, 2],
    ]);

    await alice.call("POST", `/estimates/${est.id}/send`);
    const sentEdit = await alice.call("PATCH", `/estimates/${est.id}`, { lineItems: [], currency: "USD" });
    expect(sentEdit.status).toBe(200);
    expect(sentEdit.body).toMatchObject({ status: "sent", currency: "USD", lineItems: [], total: "0.00" });
    const again = await alice.call("PATCH", `/estimates/${est.id}`, { lineItems: [WIDGET] });
    expect(again.body.lineItems[0].id).toBe(5);
    env.clock.set(NOW);
  });

  it("honours If-Match: a stale ETag is 412 and changes nothing", async () => {
    const est = await newEstimate(alice, { clientId: acme });
    const first = await alice.call("PATCH", `/estimates/${est.id}`, { notes: "a" }, { "If-Match": '"1"' });
    expect(first.status).toBe(200);
    expect(first.headers.get("etag")).toBe('"2"');
    expectProblem(
      await alice.call("PATCH", `/estimates/${est.id}`, { notes: "b" }, { "If-Match": '"1"' }),
      412,
      "precondition_failed",
    );
    expect((await alice.call("GET", `/estimates/${est.id}`)).body.notes).toBe("a");
  });
});

describe("client references", () => {
  it("an estimate holds its client; DELETE and clientId changes release it in the same transaction", async () => {
    const first = await newClient(alice);
    const second = await newClient(alice);
    const est = await newEstimate(alice, { clientId: first });
    expectProblem(await alice.call("DELETE", `/clients/${first}`), 422, "client_in_use");
    await alice.call("PATCH", `/estimates/${est.id}`, { clientId: second });
    expectProblem(await alice.call("DELETE", `/clients/${second}`), 422, "client_in_use");
    expect((await alice.call("DELETE", `/clients/${first}`)).status).toBe(204);
    expect((await alice.call("DELETE", `/estimates/${est.id}`)).status).toBe(204);
    expect((await alice.call("DELETE", `/clients/${second}`)).status).toBe(204);
  });

  it("a converted estimate and its invoice each hold the client", async () => {
    const client = await newClient(alice);
    const est = await newEstimate(alice, { clientId: client, lineItems: [WIDGET] });
    const invoice = (await alice.call("POST", `/estimates/${est.id}/convert`)).body;
    expect((await alice.call("DELETE", `/invoices/${invoice.id}`)).status).toBe(204);
    expectProblem(await alice.call("DELETE", `/clients/${client}`), 422, "client_in_use");
  });
});

describe("validation of estimate requests", () => {
  const paths = (problem: { errors?: { path: string }[] }) => (problem.errors ?? []).map((e) => e.path).sort();

  it("reports each bad field of a create with its path", async () => {
    const res = await alice.call("POST", "/estimates", {
      status: "sent",
      currency: "XYZ",
      validUntil: "2026-02-30",
      notes: 5,
      lineItems: [{ description: "", quantity: "1.234", unitPrice: "1", taxRate: "2" }],
    });
    const problem = expectProblem(res, 400, "validation_error");
    expect(paths(problem)).toEqual([
      "clientId",
      "currency",
      "lineItems.0.description",
      "lineItems.0.quantity",
      "lineItems.0.taxRate",
      "notes",
      "status",
      "validUntil",
    ]);
    expectProblem(await alice.call("POST", "/estimates"), 400, "validation_error");
    expectProblem(await alice.call("POST", "/estimates", "{nope"), 400, "malformed_json");
    expectProblem(
      await alice.call("POST", "/estimates", "{}", { "Content-Type": "text/plain" }),
      415,
      "unsupported_media_type",
    );
    const tooMany = Array.from({ length: 101 }, () => WIDGET);
    expect(
      paths(
        expectProblem(
          await alice.call("POST", "/estimates", { clientId: acme, lineItems: tooMany }),
          400,
          "validation_error",
        ),
      ),
    ).toEqual(["lineItems"]);
  });

  it("rejects read-only fields and wrong types in PATCH, and bad bodies of actions", async () => {
    const est = await estimateIn("draft");
    for (const field of [
      "id",
      "status",
      "estimateNumber",
      "convertedInvoiceId",
      "publicToken",
      "subtotal",
      "createdAt",
    ]) {
      const res = await alice.call("PATCH", `/estimates/${est.id}`, { [field]: "x" });
      expect(paths(expectProblem(res, 400, "validation_error"))).toEqual([field]);
    }
    expect(
      paths(
        expectProblem(await alice.call("PATCH", `/estimates/${est.id}`, { clientId: "1" }), 400, "validation_error"),
      ),
    ).toEqual(["clientId"]);
    expect(
      paths(
        expectProblem(await alice.call("PATCH", `/estimates/${est.id}`, { currency: null }), 400, "validation_error"),
      ),
    ).toEqual(["currency"]);
    expect(
      paths(
        expectProblem(
          await alice.call("POST", `/estimates/${est.id}/send`, { to: "not-an-email" }),
          400,
          "validation_error",
        ),
      ),
    ).toEqual(["to"]);
    expect(
      paths(
        expectProblem(
          await alice.call("POST", `/estimates/${est.id}/accept`, { reason: "x" }),
          400,
          "validation_error",
        ),
      ),
    ).toEqual(["reason"]);
    expect((await alice.call("GET", `/estimates/${est.id}`)).body.status).toBe("draft");
  });

  it("rejects bad path ids and list parameters", async () => {
    for (const path of ["/estimates/abc", "/estimates/0", "/estimates/-1", "/estimates/1.5"]) {
      expect(paths(expectProblem(await alice.call("GET", path), 400, "validation_error"))).toEqual(["id"]);
    }
    expectProblem(await alice.call("POST", "/estimates/abc/convert"), 400, "validation_error");
    expect(paths(expectProblem(await alice.call("GET", "/estimates?status=open"), 400, "validation_error"))).toEqual([
      "status",
    ]);
    expect(paths(expectProblem(await alice.call("GET", "/estimates?clientId=x"), 400, "validation_error"))).toEqual([
      "clientId",
    ]);
    expect(paths(expectProblem(await alice.call("GET", "/estimates?limit=201"), 400, "validation_error"))).toEqual([
      "limit",
    ]);
    expect(paths(expectProblem(await alice.call("GET", "/estimates?offset=-1"), 400, "validation_error"))).toEqual([
      "offset",
    ]);
    expectProblem(await alice.call("PUT", "/estimates/1"), 405, "method_not_allowed");
    expectProblem(await alice.call("GET", "/estimates/1/convert"), 405, "method_not_allowed");
  });
});

describe("listing estimates", () => {
  it("filters by status and client, newest first, with offset and Link pages", async () => {
    const lister = await env.user();
    const a = await newClient(lister);
    const b = await newClient(lister);
    const made: { id: number; clientId: number }[] = [];
    for (let i = 0; i < 7; i++)
      made.push((await newEstimate(lister, { clientId: i % 2 ? b : a, lineItems: [WIDGET] })) as never);
    const ids = (res: { body: { id: number }[] }) => res.body.map((e) => e.id);
    const all = made.map((e) => e.id).reverse();

    expect(ids(await lister.call("GET", "/estimates"))).toEqual(all);
    expect(ids(await lister.call("GET", `/estimates?clientId=${b}`))).toEqual(
      all.filter((id) => made.find((e) => e.id === id)!.clientId === b),
    );
    expect(ids(await lister.call("GET", "/estimates?clientId=999"))).toEqual([]);

    await lister.call("POST", `/estimates/${made[0]!.id}/send`);
    await lister.call("POST", `/estimates/${made[1]!.id}/send`);
    await lister.call("POST", `/estimates/${made[2]!.id}/send`);
    await lister.call("POST", `/estimates/${made[2]!.id}/accept`);
    expect(ids(await lister.call("GET", "/estimates?status=sent"))).toEqual([made[1]!.id, made[0]!.id]);
    expect(ids(await lister.call("GET", "/estimates?status=accepted"))).toEqual([made[2]!.id]);
    expect(ids(await lister.call("GET", `/estimates?status=sent&clientId=${a}`))).toEqual([made[0]!.id]);
    expect(ids(await lister.call("GET", "/estimates?status=converted"))).toEqual([]);
    expect((await lister.call("GET", "/estimates?status=draft")).body).toHaveLength(4);

    const page1 = await lister.call("GET", "/estimates?limit=3");
    expect(ids(page1)).toEqual(all.slice(0, 3));
    const link = page1.headers.get("link");
    expect(link).toMatch(/^<http:\/\/localhost\/estimates\?.*>; rel="next"$/);
    const next = new URL(/<([^>]+)>/.exec(link!)![1]!);
    expect(next.searchParams.get("offset")).toBe("3");
    const page2 = await lister.call("GET", `${next.pathname}${next.search}`);
    expect(ids(page2)).toEqual(all.slice(3, 6));
    expect(ids(await lister.call("GET", "/estimates?limit=3&offset=6"))).toEqual(all.slice(6));
    expect((await lister.call("GET", "/estimates?limit=3&offset=6")).headers.get("link")).toBeNull();
    expect(ids(await lister.call("GET", "/estimates?limit=3&offset=3&cursor=garbage"))).toEqual(all.slice(3, 6));
  });
});
