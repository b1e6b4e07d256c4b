import { describe, expect, it } from "vitest";
import { deriveEvents, kindOf } from "@invoicing/core/stream/derive";

/**
 * Event derivation from before/after images, the items shaped as the table stores them. Payments
 * are items `PAYMENT#<invoice id>#<payment id>` beside their invoice, written in the same transaction as the
 * invoice's `amountPaid` change: each side gives its own event.
 */
const pk = "USER#u1";
const invoice = (over: Record<string, unknown> = {}) => ({
  pk,
  sk: "INVOICE#0000000007",
  id: 7,
  status: "sent",
  total: "100.00",
  amountPaid: "0.00",
  version: 3,
  lineItems: [],
  createdAt: "2026-11-22T09:30:00.000Z",
  updatedAt: "2026-11-22T09:30:00.000Z",
  ...over,
});
const payment = (over: Record<string, unknown> = {}) => ({
  pk,
  sk: "PAYMENT#0000000007#0000000002",
  id: 2,
  invoiceId: 7,
  amount: "40.00",
  paymentMethod: "cash",
  paidAt: "2026-11-22T10:00:00.000Z",
  reference: null,
  source: "manual",
  status: "succeeded",
  refundedAmount: "0.00",
  createdAt: "2026-11-22T10:00:00.000Z",
  ...over,
});
const types = (
  change: "INSERT" | "MODIFY" | "REMOVE",
  before?: Record<string, unknown>,
  after?: Record<string, unknown>,
) => deriveEvents(change, before, after).map((e) => e.type);

describe("invoices", () => {
  it("creation, deletion, PATCH and each action give their own type", () => {
    expect(types("INSERT", undefined, invoice({ status: "draft" }))).toEqual(["invoice.created"]);
    expect(types("REMOVE", invoice({ status: "draft" }), undefined)).toEqual(["invoice.deleted"]);
    expect(types("MODIFY", invoice({ status: "draft" }), invoice({ status: "draft", version: 4 }))).toEqual([
      "invoice.updated",
    ]);
    for (const [from, to, type] of [
      ["draft", "finalized", "invoice.finalized"],
      ["finalized", "sent", "invoice.sent"],
      ["sent", "overdue", "invoice.overdue"],
      ["sent", "void", "invoice.voided"],
      ["draft", "void", "invoice.voided"],
    ])
      expect(types("MODIFY", invoice({ status: from }), invoice({ status: to, version: 4 }))).toEqual([type]);
  });

  it("payments: partly paid, paid, and undone", () => {
    expect(types("MODIFY", invoice(), invoice({ amountPaid: "40.00", version: 4 }))).toEqual([
      "invoice.partially_paid",
    ]);
    expect(
      types(
        "MODIFY",
        invoice({ status: "overdue", amountPaid: "40.00" }),
        invoice({ status: "overdue", amountPaid: "60.00" }),
      ),
    ).toEqual(["invoice.partially_paid"]);
    expect(
      types("MODIFY", invoice({ amountPaid: "40.00" }), invoice({ status: "paid", amountPaid: "100.00" })),
    ).toEqual(["invoice.paid"]);
    // A payment deleted or refunded: the invoice returns to sent or overdue — an update, not "sent".
    expect(
      types(
        "MODIFY",
        invoice({ status: "paid", amountPaid: "100.00" }),
        invoice({ status: "overdue", amountPaid: "60.00" }),
      ),
    ).toEqual(["invoice.updated"]);
  });

  it("bookkeeping that changes neither status, money nor version makes no event", () => {
    expect(types("MODIFY", invoice(), invoice({ cardProcessorCheckoutSessionId: "cs_1", duePk: undefined }))).toEqual(
      [],
    );
  });

  it("data is the public shape: after the change, before it for a deletion", () => {
    const [created] = deriveEvents("INSERT", undefined, invoice({ gsi1pk: "x", writeToken: "t" }));
    expect(created!.data).not.toHaveProperty("gsi1pk");
    expect(created!.data).not.toHaveProperty("version");
    expect(created!.data).toMatchObject({ id: 7, status: "sent", paymentMethod: null });
    const [deleted] = deriveEvents("REMOVE", invoice({ notes: "gone" }), undefined);
    expect(deleted!.data).toMatchObject({ notes: "gone" });
    expect(created).toMatchObject({ userId: "u1", resourceType: "invoice", resourceId: 7 });
  });
});

describe("payments", () => {
  it("created, deleted, refunded", () => {
    const [created] = deriveEvents("INSERT", undefined, payment());
    expect(created).toMatchObject({ type: "payment.created", resourceType: "payment", resourceId: 2 });
    // The public shape (the Payment resource, which names its invoice): every field of the stored payment but its keys.
    const { pk: _pk, sk: _sk, ...fields } = payment();
    expect(created!.data).toEqual(fields);
    expect(types("REMOVE", payment(), undefined)).toEqual(["payment.deleted"]);
    expect(
      types(
        "MODIFY",
        payment({ source: "card_processor" }),
        payment({ source: "card_processor", refundedAmount: "10.00" }),
      ),
    ).toEqual(["payment.refunded"]);
    expect(
      types("MODIFY", payment({ refundedAmount: "10.00" }), payment({ refundedAmount: "40.00", status: "refunded" })),
    ).toEqual(["payment.refunded"]);
    expect(types("MODIFY", payment(), payment({ note: "bookkeeping" }))).toEqual([]);
  });
});

describe("other resources", () => {
  it("estimates, schedules and clients", () => {
    // An estimate's or a schedule's events depend on its status and version only.
    const itemOf =
      (sk: string, id: number) =>
      (status: string, version = 1) => ({ pk, sk, id, status, version, lineItems: [] });
    const estimate = itemOf("ESTIMATE#0000000003", 3);
    expect(types("MODIFY", estimate("draft"), estimate("sent", 2))).toEqual(["estimate.sent"]);
    expect(types("MODIFY", estimate("sent"), estimate("sent", 2))).toEqual(["estimate.updated"]);
    for (const s of ["accepted", "declined", "expired", "converted"])
      expect(types("MODIFY", estimate("sent"), estimate(s, 2))).toEqual([`estimate.${s}`]);
    const schedule = itemOf("SCHEDULE#0000000001", 1);
    expect(types("MODIFY", schedule("active"), schedule("paused", 2))).toEqual(["recurring_schedule.paused"]);
    expect(types("MODIFY", schedule("paused"), schedule("active", 2))).toEqual(["recurring_schedule.resumed"]);
    expect(types("MODIFY", schedule("active"), schedule("completed", 2))).toEqual(["recurring_schedule.completed"]);
    expect(types("MODIFY", schedule("active"), schedule("cancelled", 2))).toEqual(["recurring_schedule.cancelled"]);
    const client = (version: number, refs = 0) => ({ pk, sk: "CLIENT#0000000001", id: 1, name: "A", version, refs });
    expect(types("MODIFY", client(1), client(2))).toEqual(["client.updated"]);
    expect(types("MODIFY", client(1, 0), client(1, 1))).toEqual([]); // a document started naming it
  });

  it("internal records make no events", () => {
    for (const sk of [
      "COUNTER#invoiceId",
      "OUTBOX#2026-x",
      "IDEMPOTENCY#abc",
      "APIKEY#0000000001",
      "REMINDER#0000000007#2026",
      "EVENT#2026#1#0",
      "WEBHOOK_ATTEMPT#0000000001#x",
      "PROFILE",
      "INVOICE#0000000007#REMINDER#1",
      "CHECKOUT_PAYMENT#cs_123",
    ]) {
      expect(kindOf(pk, sk), sk).toBeUndefined();
    }
    expect(kindOf("APIKEY#hash", "APIKEY")).toBeUndefined();
    expect(kindOf("DUE#x", "CLIENT#0000000001")).toBeUndefined();
  });

  it("a webhook endpoint makes an event only when the service disables it after days of failures", () => {
    const endpoint = (extra: Record<string, unknown> = {}) => ({
      pk,
      sk: "WEBHOOK_ENDPOINT#0000000003",
      userId: "u1",
      id: 3,
      url: "https://hooks.example/in",
      events: ["*"],
      description: null,
      enabled: true,
      secret: "whsec_c2VjcmV0",
      previousSecrets: [{ secret: "whsec_b2xk", until: "2026-11-23T00:00:00.000Z" }],
      createdAt: "2026-11-01T00:00:00.000Z",
      updatedAt: "2026-11-01T00:00:00.000Z",
      version: 1,
      ...extra,
    });
    const disabled = endpoint({ enabled: false, disabledBy: "failures", version: 2 });
    expect(deriveEvents("MODIFY", endpoint({ failingSince: "2026-11-01T00:00:00.000Z" }), disabled)).toEqual([
      {
        userId: "u1",
        type: "webhook_endpoint.disabled",
        resourceType: "webhook_endpoint",
        resourceId: 3,
        data: {
          id: 3,
          url: "https://hooks.example/in",
          events: ["*"],
          description: null,
          enabled: false,
          createdAt: "2026-11-01T00:00:00.000Z",
        },
      },
    ]);
    // Its owner's changes, its creation and deletion, its run of failures: none.
    expect(deriveEvents("MODIFY", endpoint(), endpoint({ enabled: false, version: 2 }))).toEqual([]);
    expect(deriveEvents("MODIFY", endpoint(), endpoint({ failingSince: "2026-11-02T00:00:00.000Z" }))).toEqual([]);
    expect(deriveEvents("MODIFY", endpoint(), endpoint({ secret: "whsec_bmV3", version: 2 }))).toEqual([]);
    expect(deriveEvents("INSERT", undefined, endpoint())).toEqual([]);
    expect(deriveEvents("REMOVE", endpoint(), undefined)).toEqual([]);
  });
});

describe("credit notes", () => {
  const note = (over: Record<string, unknown> = {}) => ({
    pk,
    sk: "CREDITNOTE#0000000003",
    type: "credit_note",
    id: 3,
    invoiceId: 7,
    creditNoteNumber: "CN-000003",
    status: "issued",
    total: "40.00",
    sentAt: null,
    version: 1,
    lineItems: [],
    ...over,
  });

  it("the insert is credit_note.created with the credit note as data, a send credit_note.sent, nothing else", () => {
    expect(kindOf(pk, "CREDITNOTE#0000000003")).toEqual({ resourceType: "credit_note", id: 3 });
    const [created] = deriveEvents("INSERT", undefined, note());
    expect(created).toMatchObject({ type: "credit_note.created", resourceType: "credit_note", resourceId: 3 });
    expect(created!.data).toMatchObject({ id: 3, creditNoteNumber: "CN-000003", total: "40.00", sentAt: null });
    expect(created!.data).not.toHaveProperty("pk");
    const sent = note({ sentAt: "2026-11-22T10:00:00.000Z", version: 2 });
    expect(types("MODIFY", note(), sent)).toEqual(["credit_note.sent"]);
    expect(types("MODIFY", sent, note({ sentAt: "2026-11-23T10:00:00.000Z", version: 3 }))).toEqual([
      "credit_note.sent",
    ]);
    expect(types("MODIFY", sent, { ...sent, writeToken: "x" })).toEqual([]);
  });

  it("its invoice: credited, or voided / paid when the credit changed the status", () => {
    expect(types("MODIFY", invoice(), invoice({ creditedAmount: "40.00", version: 4 }))).toEqual(["invoice.credited"]);
    // An invoice written before credit notes has no creditedAmount: read as 0.00.
    expect(
      types(
        "MODIFY",
        invoice({ status: "paid", amountPaid: "100.00" }),
        invoice({ status: "paid", amountPaid: "100.00", creditedAmount: "10.00" }),
      ),
    ).toEqual(["invoice.credited"]);
    expect(
      types("MODIFY", invoice({ creditedAmount: "40.00" }), invoice({ status: "void", creditedAmount: "100.00" })),
    ).toEqual(["invoice.voided"]);
    expect(
      types(
        "MODIFY",
        invoice({ amountPaid: "60.00" }),
        invoice({ status: "paid", amountPaid: "60.00", creditedAmount: "40.00" }),
      ),
    ).toEqual(["invoice.paid"]);
  });
});
