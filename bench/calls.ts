import type { Hono } from "hono";
import type { Meter } from "../test/support/metering";
import { request } from "../test/support/env";

/**
 * DynamoDB requests, sequential round trips and consumed capacity per API call, measured on
 * DynamoDB Local through the real app (counted, not timed). Goals (issues 11 and 19): GET of one
 * record ONE request, a page ONE round trip (its Query alongside the key's GetItem), creates one
 * read and one transaction (no client read of their own), a transition 1 + auth, finalize ≤ 3 +
 * auth, a credit note 1 + auth, a cursor page one page at any depth.
 */
interface CallFigure {
  operation: string;
  requests: number;
  roundTrips: number;
  capacityUnits: number;
  readUnits: number;
  writeUnits: number;
  itemsRead: number;
  commands: Record<string, number>;
  goal?: string;
  meetsGoal?: boolean;
}

type App = Pick<Hono, "request">;
type Goal = { text: string; met: (m: Meter) => boolean };

const requests = (n: number, text = `${n} request${n > 1 ? "s" : ""}`): Goal => ({
  text: `≤ ${text}`,
  met: (m) => m.calls <= n,
});
const trips = (n: number, text: string): Goal => ({ text, met: (m) => m.roundTrips <= n });

export async function measureCalls(app: App, meter: Meter, key: string): Promise<CallFigure[]> {
  const auth = { Authorization: `Bearer ${key}` };
  const call = (method: string, path: string, body?: unknown) => request(app, method, path, body, auth);
  const figures: CallFigure[] = [];
  async function measure(operation: string, run: () => Promise<{ status: number }>, goal?: Goal) {
    meter.reset();
    const res = await run();
    if (res.status >= 300) throw new Error(`${operation} answered ${res.status}`);
    figures.push({
      operation,
      requests: meter.calls,
      roundTrips: meter.roundTrips,
      capacityUnits: round(meter.capacityUnits),
      readUnits: round(meter.readUnits),
      writeUnits: round(meter.writeUnits),
      itemsRead: meter.itemsRead,
      commands: { ...meter.byCommand },
      goal: goal?.text,
      meetsGoal: goal?.met(meter),
    });
    return res;
  }

  const client = (await call("POST", "/clients", { name: "Bench client", email: "bench@example.com" })).body;
  const line = { description: "Consulting", quantity: "3", unitPrice: "19.99", taxRate: "0.0825" };
  // Enough invoices that offset 1000 is deep.
  for (let i = 0; i < 1100; i++) await call("POST", "/invoices", { clientId: client.id, lineItems: [line] });

  const oneReadOneWrite = trips(2, "2 round trips: one read (key, client, counters), one transaction");
  const created = (await measure(
    "POST /invoices (create)",
    () => call("POST", "/invoices", { clientId: client.id, lineItems: [line] }),
    oneReadOneWrite,
  )) as unknown as { body: { id: number } };
  const id = created.body.id;
  await measure(
    "GET /invoices/{id}",
    () => call("GET", `/invoices/${id}`),
    requests(1, "1 request (key + record, one BatchGetItem)"),
  );
  await measure("PATCH /invoices/{id}", () => call("PATCH", `/invoices/${id}`, { notes: "Thanks!" }));
  await measure(
    "POST /invoices/{id}/finalize",
    () => call("POST", `/invoices/${id}/finalize`),
    requests(4, "3 + auth"),
  );
  await measure("POST /invoices/{id}/send", () => call("POST", `/invoices/${id}/send`));
  await measure(
    "POST /invoices/{id}/mark-paid",
    () => call("POST", `/invoices/${id}/mark-paid`, { paymentMethod: "cash" }),
    requests(2, "1 + auth"),
  );
  // Credit notes (docs/credit-notes.md): one read (key, invoice, CN counter) and one transaction of
  // three items (credit note, counter, invoice), beside finalize's figures above.
  const credited = (await call("POST", "/invoices", { clientId: client.id, lineItems: [line] })).body as { id: number };
  await call("POST", `/invoices/${credited.id}/finalize`);
  await call("POST", `/invoices/${credited.id}/send`);
  await measure(
    "POST /invoices/{id}/credit-notes (partial)",
    () => call("POST", `/invoices/${credited.id}/credit-notes`, { lineItems: [{ invoiceLineId: 1, quantity: "1" }] }),
    requests(2, "1 + auth: one read, one transaction"),
  );
  await measure(
    "POST /invoices/{id}/credit-notes (the rest: void)",
    () => call("POST", `/invoices/${credited.id}/credit-notes`),
    requests(2, "1 + auth: one read, one transaction"),
  );
  await measure(
    "GET /invoices?limit=100 (offset 0)",
    () => call("GET", "/invoices?limit=100"),
    trips(1, "1 round trip (Query ∥ key)"),
  );
  await measure("GET /invoices?limit=100&offset=1000 (offset)", () => call("GET", "/invoices?limit=100&offset=1000"));
  const page = await call("GET", "/invoices?limit=100&offset=900");
  const link = /<([^>]+)>/.exec(page.headers.get("link") ?? "")?.[1];
  if (link) {
    const url = new URL(link);
    const offsetZero = figures.find((f) => f.operation.includes("offset 0"))!;
    await measure(
      "GET /invoices?limit=100&offset=1000 (Link cursor)",
      () => call("GET", `${url.pathname}${url.search}`),
      {
        text: `= offset-0 page (${offsetZero.requests} requests, ${offsetZero.itemsRead} items)`,
        met: (m) => m.calls <= offsetZero.requests && m.itemsRead <= offsetZero.itemsRead,
      },
    );
  }

  const estimate = await measure(
    "POST /estimates (create)",
    () => call("POST", "/estimates", { clientId: client.id, lineItems: [line] }),
    oneReadOneWrite,
  );
  const estimateId = (estimate as unknown as { body: { id: number } }).body.id;
  await measure("GET /estimates/{id}", () => call("GET", `/estimates/${estimateId}`), requests(1, "1 request"));
  await measure("POST /estimates/{id}/convert", () => call("POST", `/estimates/${estimateId}/convert`));
  await measure(
    "POST /recurring-schedules (future start)",
    () =>
      call("POST", "/recurring-schedules", {
        clientId: client.id,
        frequency: "monthly",
        startDate: "2099-01-01",
        lineItems: [line],
      }),
    oneReadOneWrite,
  );
  await measure(
    "POST /recurring-schedules (immediate first invoice)",
    () => call("POST", "/recurring-schedules", { clientId: client.id, frequency: "monthly", lineItems: [line] }),
    oneReadOneWrite,
  );
  await measure("GET /clients/{id}", () => call("GET", `/clients/${client.id}`), requests(1, "1 request"));
  return figures;
}

const round = (n: number) => Math.round(n * 100) / 100;
