import { expect } from "vitest";
import { jobs } from "@invoicing/core/jobs/all";
import type { TestEnv, TestResponse, TestUser } from "../support/env";
import { WIDGET } from "../support/line-items";

/** Builders for the invoice API tests: each call goes through the HTTP API and checks its status. */

/** A line item: the contract's worked example (test/support/line-items.ts), with `over` changed. */
export const line = (over: Record<string, unknown> = {}) => ({ ...WIDGET, ...over });

export function ok(res: TestResponse, status = 200): TestResponse {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status} ${res.text.slice(0, 500)}`);
  return res;
}

export async function newClient(user: TestUser, body: Record<string, unknown> = {}) {
  return ok(await user.call("POST", "/clients", { name: "Acme", email: "billing@acme.test", ...body }), 201).body as {
    id: number;
    name: string;
    email: string | null;
    currency: string;
    paymentTermsDays: number;
  };
}

export async function newInvoice(user: TestUser, body: Record<string, unknown>) {
  return ok(await user.call("POST", "/invoices", { lineItems: [line()], ...body }), 201).body;
}

export type Status = "draft" | "finalized" | "sent" | "paid" | "overdue" | "void";

/**
 * An invoice brought to `status` through the API. `overdue` needs the job: the invoice is due a
 * day before the clock, and the job runs at the clock's time.
 */
export async function invoiceIn(
  env: TestEnv,
  user: TestUser,
  clientId: number,
  status: Status,
  body: Record<string, unknown> = {},
) {
  const extra = status === "overdue" ? { dueDate: new Date(env.clock.now.getTime() - 86_400_000).toISOString() } : {};
  const invoice = await newInvoice(user, { clientId, ...extra, ...body });
  const id = invoice.id as number;
  if (status === "draft") return invoice;
  if (status === "void") return ok(await user.call("POST", `/invoices/${id}/void`)).body;
  const finalized = ok(await user.call("POST", `/invoices/${id}/finalize`)).body;
  if (status === "finalized") return finalized;
  const sent = ok(await user.call("POST", `/invoices/${id}/send`, { to: "someone@example.test" })).body;
  if (status === "sent") return sent;
  if (status === "paid")
    return ok(await user.call("POST", `/invoices/${id}/mark-paid`, { paymentMethod: "cash" })).body;
  await jobs.overdue!(env.deps, env.clock.now);
  const overdue = ok(await user.call("GET", `/invoices/${id}`)).body;
  expect(overdue.status).toBe("overdue");
  return overdue;
}
