import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { op, type FaultKind } from "../support/fault-proxy";
import { createFaultyEnv, partition, type FaultyEnv } from "../reliability/harness";

/**
 * Found by the model test under CPU load: a transaction DynamoDB applied but whose response was lost
 * (the SDK's request timeout, common on a loaded machine) is resent by the SDK; when that resend
 * comes back cancelled with a TransactionConflict, commit() tries again as a new transaction — which
 * met its own first copy (the invoice already there) and answered 500. It must answer as the write
 * it was, once.
 */
let world: FaultyEnv;

beforeAll(async () => {
  world = await createFaultyEnv({ silenceWarnings: true });
});

afterAll(async () => {
  await world?.close();
});

/** The first matching request applies but loses its response, the next is cancelled by a conflict. */
function lostThenConflict(): () => FaultKind | undefined {
  const faults: FaultKind[] = ["timeout-after-write", "conflict"];
  return () => faults.shift();
}

describe("a lost transaction response, then a conflict on the resend", () => {
  it.each([false, true])("POST /invoices (Idempotency-Key: %s) answers 201 and makes one invoice", async (keyed) => {
    const user = await world.env.user();
    const faulty = world.as(user);
    const clientId = (await user.call("POST", "/clients", { name: "Acme" })).body.id as number;
    const rule = world.proxy.inject({
      match: op("TransactWriteItems", "INVOICE#"),
      fault: lostThenConflict(),
      times: 2,
    });
    const headers: Record<string, string> = keyed ? { "Idempotency-Key": `resend-${Date.now()}` } : {};
    const created = await faulty.call(
      "POST",
      "/invoices",
      { clientId, lineItems: [{ description: "Work", unitPrice: "10.00" }] },
      headers,
    );
    rule.remove();
    expect(rule.hits).toBe(2);
    expect({ status: created.status, body: created.status === 201 ? "invoice" : created.text }).toEqual({
      status: 201,
      body: "invoice",
    });
    const listed = (await user.call("GET", "/invoices")).body as { id: number }[];
    expect(listed.map((i) => i.id)).toEqual([created.body.id]);
  });

  it("an invoice transition made of several writes (send) answers 200 once, its email queued once", async () => {
    const user = await world.env.user();
    const faulty = world.as(user);
    const clientId = (await user.call("POST", "/clients", { name: "Acme", email: "ap@acme.test" })).body.id as number;
    const invoice = (
      await user.call("POST", "/invoices", { clientId, lineItems: [{ description: "Work", unitPrice: "10.00" }] })
    ).body;
    await user.call("POST", `/invoices/${invoice.id}/finalize`);
    const rule = world.proxy.inject({
      match: op("TransactWriteItems", "OUTBOX#"),
      fault: lostThenConflict(),
      times: 2,
    });
    const sent = await faulty.call("POST", `/invoices/${invoice.id}/send`);
    rule.remove();
    expect(rule.hits).toBe(2);
    expect(sent.status, sent.text).toBe(200);
    expect((await user.call("GET", `/invoices/${invoice.id}`)).body).toMatchObject({ status: "sent" });
    const outbox = (await partition(world.env.deps.db, user.userId)).filter((item) =>
      String(item.sk).startsWith("OUTBOX#"),
    );
    expect(outbox).toHaveLength(1);
  });
});
