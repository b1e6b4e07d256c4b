import fc from "fast-check";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { counterKey } from "@invoicing/core/db/keys";
import { LEASE_MS } from "@invoicing/core/idempotency/records";
import { decimalString, referenceRound, scaledDigits } from "../../packages/core/test/money-reference";
import { FAULT_KINDS, type FaultKind } from "../support/fault-proxy";
import type { TestEnv, TestResponse, TestUser } from "../support/env";
import { RUNS, createFaultyEnv, problemShape, type FaultyEnv } from "./harness";

/**
 * Model-based test: random sequences of invoice operations run against the app and against a tiny
 * reference model of API.md section 6 (the state machine, gapless numbering, exact money). After
 * every step status codes, error codes, states and amounts agree.
 *
 * It runs twice: against DynamoDB Local as is, and through the fault proxy with random faults on
 * a share of DynamoDB requests while the client behaves as API.md invites (a fresh Idempotency-Key
 * per POST, retried on 503 until a definite answer). Faults must not show: same answers, same
 * state, no duplicate, no gap — and at the end the table holds exactly the model.
 */

// ---------------------------------------------------------------- the reference model

type Status = "draft" | "finalized" | "sent" | "paid" | "overdue" | "void";

interface LineSpec {
  description: string;
  quantity: string;
  unitPrice: string;
  taxRate: string;
}

interface ModelInvoice {
  id: number;
  status: Status;
  lines: LineSpec[];
  invoiceNumber: string | null;
  paymentMethod: string | null;
  deleted: boolean;
}

interface Model {
  invoices: ModelInvoice[];
  lastNumber: number;
}

/** Money by the reference arithmetic (digits, not src/money): cents as bigint. */
function lineCents(line: LineSpec): { amount: bigint; tax: bigint } {
  const amount = referenceRound(scaledDigits(line.quantity, 2) * scaledDigits(line.unitPrice, 2), 4, 2);
  const tax = referenceRound(amount * scaledDigits(line.taxRate, 6), 8, 2);
  return { amount, tax };
}

function totals(lines: LineSpec[]) {
  let subtotal = 0n;
  let taxTotal = 0n;
  for (const line of lines) {
    const { amount, tax } = lineCents(line);
    subtotal += amount;
    taxTotal += tax;
  }
  return { subtotal, taxTotal, total: subtotal + taxTotal };
}

const money = (cents: bigint): string => {
  const sign = cents < 0n ? "-" : "";
  const abs = (cents < 0n ? -cents : cents).toString().padStart(3, "0");
  return `${sign}${abs.slice(0, -2)}.${abs.slice(-2)}`;
};

/** What the API must show for a model invoice. */
function expected(invoice: ModelInvoice) {
  const t = totals(invoice.lines);
  return {
    id: invoice.id,
    status: invoice.status,
    invoiceNumber: invoice.invoiceNumber,
    subtotal: money(t.subtotal),
    taxTotal: money(t.taxTotal),
    total: money(t.total),
    amountPaid: invoice.status === "paid" ? money(t.total) : "0.00",
    paymentMethod: invoice.paymentMethod,
    lineAmounts: invoice.lines.map((line) => money(lineCents(line).amount)),
  };
}

function actual(body: Record<string, unknown>) {
  return {
    id: body.id,
    status: body.status,
    invoiceNumber: body.invoiceNumber,
    subtotal: body.subtotal,
    taxTotal: body.taxTotal,
    total: body.total,
    amountPaid: body.amountPaid,
    paymentMethod: body.paymentMethod,
    lineAmounts: (body.lineItems as { amount: string }[]).map((l) => l.amount),
  };
}

// ---------------------------------------------------------------- the system under test

interface Real {
  user: TestUser;
  clientId: number;
  /** The client API.md invites: retries a 503 (same Idempotency-Key) until the answer is definite. */
  call(method: string, path: string, body?: unknown): Promise<TestResponse>;
}

/** Expected answer of one step: a status and, for errors, the problem code. */
function expectAnswer(res: TestResponse, status: number, code?: string): void {
  const got = `${res.status} ${res.status >= 400 ? res.body?.code : ""}`.trim();
  expect(got, res.text.slice(0, 300)).toBe(`${status} ${code ?? ""}`.trim());
  if (status >= 400) problemShape(res);
}

const pick = (m: Model, slot: number): ModelInvoice | undefined => (m.invoices.length ? m.invoices[slot % m.invoices.length] : undefined);

/** The id a command acts on: a model invoice, or one that never existed. */
const idOf = (m: Model, slot: number): number => pick(m, slot)?.id ?? 999_999;

type Cmd = fc.AsyncCommand<Model, Real>;

class Create implements Cmd {
  constructor(readonly lines: LineSpec[]) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const res = await r.call("POST", "/invoices", { clientId: r.clientId, lineItems: this.lines });
    expectAnswer(res, 201);
    const invoice: ModelInvoice = { id: res.body.id, status: "draft", lines: this.lines, invoiceNumber: null, paymentMethod: null, deleted: false };
    expect(m.invoices.map((i) => i.id)).not.toContain(invoice.id);
    m.invoices.push(invoice);
    expect(actual(res.body)).toEqual(expected(invoice));
  }
  toString = () => `create(${JSON.stringify(this.lines)})`;
}

/** A command on one existing (or deleted, or never created) invoice. */
abstract class OnInvoice implements Cmd {
  constructor(readonly slot: number) {}
  check = () => true;
  abstract act(r: Real, id: number): Promise<TestResponse>;
  /** The model's verdict for an invoice that exists: the answer, and the change when it succeeds. */
  abstract rule(invoice: ModelInvoice, m: Model): { status: number; code?: string; apply?: () => void };
  async run(m: Model, r: Real) {
    const invoice = pick(m, this.slot);
    const res = await this.act(r, idOf(m, this.slot));
    if (!invoice || invoice.deleted) return expectAnswer(res, 404, "not_found");
    const verdict = this.rule(invoice, m);
    expectAnswer(res, verdict.status, verdict.code);
    verdict.apply?.();
    if (res.status === 200) expect(actual(res.body)).toEqual(expected(invoice));
  }
  toString = () => `${this.constructor.name.toLowerCase()}(#${this.slot})`;
}

class Get extends OnInvoice {
  act = (r: Real, id: number) => r.call("GET", `/invoices/${id}`);
  rule = () => ({ status: 200 });
}

class Patch extends OnInvoice {
  constructor(slot: number, readonly lines: LineSpec[]) {
    super(slot);
  }
  act = (r: Real, id: number) => r.call("PATCH", `/invoices/${id}`, { lineItems: this.lines });
  rule = (invoice: ModelInvoice) =>
    invoice.status !== "draft" ? { status: 422, code: "invoice_not_editable" } : { status: 200, apply: () => void (invoice.lines = this.lines) };
  override toString = () => `patch(#${this.slot}, ${JSON.stringify(this.lines)})`;
}

class Finalize extends OnInvoice {
  act = (r: Real, id: number) => r.call("POST", `/invoices/${id}/finalize`);
  rule(invoice: ModelInvoice, m: Model) {
    if (invoice.status !== "draft") return { status: 422, code: "invalid_transition" };
    if (invoice.lines.length === 0) return { status: 422, code: "empty_invoice" };
    if (totals(invoice.lines).total < 0n) return { status: 422, code: "negative_total" };
    return {
      status: 200,
      apply: () => {
        m.lastNumber++;
        invoice.status = "finalized";
        invoice.invoiceNumber = `INV-${String(m.lastNumber).padStart(6, "0")}`;
      },
    };
  }
}

class Send extends OnInvoice {
  act = (r: Real, id: number) => r.call("POST", `/invoices/${id}/send`);
  rule = (invoice: ModelInvoice) =>
    invoice.status !== "finalized" ? { status: 422, code: "invalid_transition" } : { status: 200, apply: () => void (invoice.status = "sent") };
}

class MarkPaid extends OnInvoice {
  constructor(slot: number, readonly method: string) {
    super(slot);
  }
  act = (r: Real, id: number) => r.call("POST", `/invoices/${id}/mark-paid`, { paymentMethod: this.method });
  rule = (invoice: ModelInvoice) =>
    invoice.status !== "sent" && invoice.status !== "overdue"
      ? { status: 422, code: "invalid_transition" }
      : { status: 200, apply: () => void Object.assign(invoice, { status: "paid", paymentMethod: this.method }) };
  override toString = () => `markPaid(#${this.slot}, ${this.method})`;
}

class Void extends OnInvoice {
  act = (r: Real, id: number) => r.call("POST", `/invoices/${id}/void`);
  rule = (invoice: ModelInvoice) =>
    invoice.status === "void" ? { status: 422, code: "invalid_transition" } : { status: 200, apply: () => void (invoice.status = "void") };
}

class Delete extends OnInvoice {
  act = (r: Real, id: number) => r.call("DELETE", `/invoices/${id}`);
  rule = (invoice: ModelInvoice) =>
    invoice.status !== "draft" ? { status: 422, code: "invoice_not_editable" } : { status: 204, apply: () => void (invoice.deleted = true) };
}

class List implements Cmd {
  constructor(readonly status: Status) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const res = await r.call("GET", `/invoices?status=${this.status}&limit=200`);
    expectAnswer(res, 200);
    // Newest first; created one after another on a fixed clock, so by id descending.
    const want = m.invoices.filter((i) => !i.deleted && i.status === this.status).map((i) => i.id).sort((a, b) => b - a);
    expect(res.body.map((i: { id: number }) => i.id)).toEqual(want);
  }
  toString = () => `list(${this.status})`;
}

// ---------------------------------------------------------------- arbitraries

const lineArb: fc.Arbitrary<LineSpec> = fc.record({
  description: fc.constantFrom("Widget", "Consulting", "Discount", "Ünïcode ✓"),
  quantity: decimalString({ maxWhole: 1000n, maxDecimals: 2, positive: true }),
  unitPrice: decimalString({ maxWhole: 100_000n, maxDecimals: 2 }),
  taxRate: fc.integer({ min: 0, max: 1_000_000 }).map((n) => `${Math.floor(n / 1_000_000)}.${String(n % 1_000_000).padStart(6, "0")}`),
});
const linesArb = fc.array(lineArb, { maxLength: 3 });
const slotArb = fc.nat({ max: 7 });

const commandsArb = (maxCommands: number) =>
  fc.commands(
    [
      linesArb.map((lines) => new Create(lines)),
      slotArb.map((s) => new Get(s)),
      fc.tuple(slotArb, linesArb).map(([s, lines]) => new Patch(s, lines)),
      slotArb.map((s) => new Finalize(s)),
      slotArb.map((s) => new Send(s)),
      fc.tuple(slotArb, fc.constantFrom("cash", "check", "bank_transfer", "other")).map(([s, method]) => new MarkPaid(s, method)),
      slotArb.map((s) => new Void(s)),
      slotArb.map((s) => new Delete(s)),
      fc.constantFrom<Status>("draft", "finalized", "sent", "paid", "void").map((s) => new List(s)),
    ],
    { maxCommands },
  );

// ---------------------------------------------------------------- the runs

let world: FaultyEnv;
let env: TestEnv;

beforeAll(async () => {
  world = await createFaultyEnv();
  env = world.env;
  vi.spyOn(console, "warn").mockImplementation(() => undefined); // 503s log a warning each
});

afterAll(async () => {
  await world?.close();
});

async function newReal(call: (user: TestUser) => Real["call"]): Promise<Real> {
  const user = await env.user();
  const created = await user.call("POST", "/clients", { name: "Model Client", email: "model@client.test" });
  expect(created.status).toBe(201);
  return { user, clientId: created.body.id, call: call(user) };
}

/** After a run: the table holds exactly the model, numbers gapless from 1, the counter at the last. */
async function assertTableIsModel(m: Model, r: Real): Promise<void> {
  const all = await r.user.call("GET", "/invoices?limit=200");
  expect(all.status).toBe(200);
  const live = m.invoices.filter((i) => !i.deleted);
  expect(all.body.map((i: { id: number }) => i.id).sort((a: number, b: number) => a - b)).toEqual(live.map((i) => i.id));
  for (const invoice of live) {
    expect(actual(all.body.find((i: { id: number }) => i.id === invoice.id))).toEqual(expected(invoice));
  }
  const numbers = all.body.map((i: { invoiceNumber: string | null }) => i.invoiceNumber).filter(Boolean).sort();
  expect(numbers).toEqual(Array.from({ length: m.lastNumber }, (_, i) => `INV-${String(i + 1).padStart(6, "0")}`));
  const counter = await env.deps.db.doc.send(new GetCommand({ TableName: env.tableName, Key: counterKey(r.user.userId, "invoiceNumber"), ConsistentRead: true }));
  expect(Number(counter.Item?.value ?? 0)).toBe(m.lastNumber);
}

describe("invoices against the reference model", () => {
  it("agree on every answer, state and amount", async () => {
    await fc.assert(
      fc.asyncProperty(commandsArb(30), async (cmds) => {
        const real = await newReal((user) => user.call);
        const model: Model = { invoices: [], lastNumber: 0 };
        await fc.asyncModelRun(() => ({ model, real }), cmds);
        await assertTableIsModel(model, real);
      }),
      { numRuns: RUNS },
    );
  });

  it("agree under random DynamoDB faults, with a client that retries 503 under its Idempotency-Key", async () => {
    let keys = 0;
    await fc.assert(
      fc.asyncProperty(commandsArb(15), fc.integer(), async (cmds, seed) => {
        const random = prng(seed);
        const rule = world.proxy.inject({ match: () => true, fault: chaos(random), times: Infinity });
        const real = await newReal((user) => {
          const faulty = world.as(user);
          return async (method, path, body) => {
            // A POST carries a key of its own, kept across its retries; other methods are
            // naturally idempotent, except DELETE, whose retry may find its own work done.
            const headers: Record<string, string> = method === "POST" ? { "Idempotency-Key": `model-${++keys}` } : {};
            let unsure = false;
            for (let attempt = 1; ; attempt++) {
              const res = await faulty.call(method, path, body, headers);
              if (method === "DELETE" && unsure && res.status === 404) return { ...res, status: 204 };
              if (res.status === 409 && res.body?.code === "idempotency_key_in_use") {
                // A claim left behind by an attempt whose clean-up failed: it frees itself after the lease.
                env.clock.advance(LEASE_MS + 1);
              } else if (res.status !== 503) {
                return res;
              } else {
                expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
              }
              unsure = true;
              if (attempt >= 12) throw new Error(`${method} ${path}: still ${res.status} after ${attempt} attempts`);
            }
          };
        });
        const model: Model = { invoices: [], lastNumber: 0 };
        try {
          await fc.asyncModelRun(() => ({ model, real }), cmds);
        } finally {
          rule.remove();
        }
        await assertTableIsModel(model, real);
      }),
      { numRuns: Math.max(2, Math.ceil(RUNS / 4)) },
    );
  });
});

/** A small seeded generator, so a failing run's faults come back with fast-check's seed. */
function prng(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

/**
 * One DynamoDB request in eight gets a fault; lost responses are rarer (each costs a timeout), and
 * transaction conflicts only hit transactions, as in DynamoDB.
 */
function chaos(random: () => number): (operation: string) => FaultKind | undefined {
  const weights: Record<FaultKind, number> = {
    throttle: 3,
    provisioned: 1,
    "server-error": 3,
    conflict: 2,
    "timeout-after-write": 1,
    "reset-after-write": 2,
  };
  const bag = FAULT_KINDS.flatMap((kind) => Array<FaultKind>(weights[kind]).fill(kind));
  return (operation) => {
    if (random() >= 1 / 8) return undefined;
    const kind = bag[Math.floor(random() * bag.length)]!;
    return kind === "conflict" && operation !== "TransactWriteItems" ? "throttle" : kind;
  };
}
