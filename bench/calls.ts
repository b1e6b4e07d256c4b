import type { Hono } from "hono";
import type { Meter } from "@invoicing/core/db/metering";
import { request } from "../test/support/env";

/**
 * DynamoDB requests and consumed capacity per API call, measured on DynamoDB Local through the
 * real app. Goals from issue 11: GET by id ≤ 2 (auth + get), a transition 1 + auth, finalize ≤ 3 +
 * auth, a cursor page one page at any depth.
 */
export interface CallFigure {
  operation: string;
  requests: number;
  capacityUnits: number;
  itemsRead: number;
  commands: Record<string, number>;
  goal?: string;
  meetsGoal?: boolean;
}

type App = Pick<Hono, "request">;

export async function measureCalls(app: App, meter: Meter, key: string): Promise<CallFigure[]> {
  const auth = { Authorization: `Bearer ${key}` };
  const call = (method: string, path: string, body?: unknown) => request(app, method, path, body, auth);
  const figures: CallFigure[] = [];
  async function measure(operation: string, run: () => Promise<{ status: number }>, goal?: number, goalText?: string) {
    meter.reset();
    const res = await run();
    if (res.status >= 300) throw new Error(`${operation} answered ${res.status}`);
    figures.push({
      operation,
      requests: meter.calls,
      capacityUnits: round(meter.capacityUnits),
      itemsRead: meter.itemsRead,
      commands: { ...meter.byCommand },
      goal: goalText ?? (goal === undefined ? undefined : `≤ ${goal}`),
      meetsGoal: goal === undefined ? undefined : meter.calls <= goal,
    });
    return res;
  }

  const client = (await call("POST", "/clients", { name: "Bench client", email: "bench@example.com" })).body;
  const line = { description: "Consulting", quantity: "3", unitPrice: "19.99", taxRate: "0.0825" };
  // Enough invoices that offset 1000 is deep.
  for (let i = 0; i < 1100; i++) await call("POST", "/invoices", { clientId: client.id, lineItems: [line] });

  const created = (await measure("POST /invoices (create)", () => call("POST", "/invoices", { clientId: client.id, lineItems: [line] }))) as unknown as { body: { id: number } };
  const id = created.body.id;
  await measure("GET /invoices/{id}", () => call("GET", `/invoices/${id}`), 2, "≤ 2 (auth + get)");
  await measure("PATCH /invoices/{id}", () => call("PATCH", `/invoices/${id}`, { notes: "Thanks!" }));
  await measure("POST /invoices/{id}/finalize", () => call("POST", `/invoices/${id}/finalize`), 4, "≤ 3 + auth");
  await measure("POST /invoices/{id}/send", () => call("POST", `/invoices/${id}/send`));
  await measure("POST /invoices/{id}/mark-paid", () => call("POST", `/invoices/${id}/mark-paid`, { paymentMethod: "cash" }), 2, "1 + auth");
  await measure("GET /invoices?limit=100 (offset 0)", () => call("GET", "/invoices?limit=100"));
  const deep = (await measure("GET /invoices?limit=100&offset=1000 (offset)", () => call("GET", "/invoices?limit=100&offset=1000"))) as unknown as { headers: Headers };
  void deep;
  const page = await call("GET", "/invoices?limit=100&offset=900");
  const link = /<([^>]+)>/.exec(page.headers.get("link") ?? "")?.[1];
  if (link) {
    const url = new URL(link);
    const offsetZero = figures.find((f) => f.operation.includes("offset 0"))!;
    await measure("GET /invoices?limit=100&offset=1000 (Link cursor)", () => call("GET", `${url.pathname}${url.search}`), offsetZero.requests, `= offset-0 page (${offsetZero.requests})`);
  }

  const estimate = await call("POST", "/estimates", { clientId: client.id, lineItems: [line] });
  if (estimate.status === 201) {
    await measure("POST /estimates/{id}/convert", () => call("POST", `/estimates/${estimate.body.id}/convert`));
  }
  const scheduleRes = await call("POST", "/recurring-schedules", { clientId: client.id, frequency: "monthly", startDate: "2099-01-01", lineItems: [line] });
  if (scheduleRes.status === 201) {
    await measure("POST /recurring-schedules (future start)", async () =>
      call("POST", "/recurring-schedules", { clientId: client.id, frequency: "monthly", startDate: "2099-01-01", lineItems: [line] }));
    await measure("POST /recurring-schedules (immediate first invoice)", async () =>
      call("POST", "/recurring-schedules", { clientId: client.id, frequency: "monthly", lineItems: [line] }));
  }
  return figures;
}

const round = (n: number) => Math.round(n * 100) / 100;
