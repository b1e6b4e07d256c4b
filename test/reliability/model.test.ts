import fc from "fast-check";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { counterKey } from "@invoicing/core/db/keys";
import { LEASE_MS } from "@invoicing/core/idempotency/records";
import { decimalString, referenceRound, scaledDigits } from "../../packages/core/test/money-reference";
import type { TestEnv, TestResponse, TestUser } from "../support/env";
import { RUNS, chaos, createFaultyEnv, problemShape, prng, type FaultyEnv } from "./harness";

/**
 * Model-based test: random sequences of invoice operations run against the app and against a tiny
 * reference model of the invoice, payment and credit note API (the state machine, gapless numbering,
 * exact money, payments: partial, complete, deleted; credit notes: whole or free, voiding or paying
 * the invoice). After every step status codes, error codes, states and amounts agree; at the end
 * every invoice's payments and credit notes are the model's, none lost or doubled, amountPaid and
 * creditedAmount are their sums, and credit note numbers are gapless.
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

interface ModelPayment {
  cents: bigint;
  method: string;
}

interface ModelInvoice {
  id: number;
  /**
   * The counted payments, oldest first (replaced, never mutated: a reconcile restores the old array).
   * amountPaid is their sum, KEPT when the invoice is voided: a void records no refund. (The model
   * once derived amountPaid from the status, so a paid invoice voided showed "0.00" in the model but
   * the paid amount in the API: a rare random sequence, paid then void, failed "as if flaky".)
   */
  payments: ModelPayment[];
  status: Status;
  lines: LineSpec[];
  invoiceNumber: string | null;
  paymentMethod: string | null;
  /** Every change adds one: the ETag. A change applied twice shows here. */
  version: number;
  deleted: boolean;
  /** The totals of its credit notes, oldest first (replaced, never mutated). */
  credits: bigint[];
  /** Whether a credit note took every line (the model credits lines only whole, all at once). */
  linesCredited: boolean;
}

interface Model {
  invoices: ModelInvoice[];
  lastNumber: number;
  /** The last credit note number given (CN-…), per user, gapless. */
  lastCreditNote: number;
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

/** What the API must show for a model invoice (body and ETag). */
const paidCents = (invoice: ModelInvoice): bigint => invoice.payments.reduce((sum, p) => sum + p.cents, 0n);
const creditedCents = (invoice: ModelInvoice): bigint => invoice.credits.reduce((sum, c) => sum + c, 0n);
/** max(0, total − amountPaid − creditedAmount) */
const dueCents = (invoice: ModelInvoice): bigint => {
  const due = totals(invoice.lines).total - paidCents(invoice) - creditedCents(invoice);
  return due > 0n ? due : 0n;
};

function expected(invoice: ModelInvoice) {
  const t = totals(invoice.lines);
  return {
    id: invoice.id,
    status: invoice.status,
    invoiceNumber: invoice.invoiceNumber,
    subtotal: money(t.subtotal),
    taxTotal: money(t.taxTotal),
    total: money(t.total),
    amountPaid: money(paidCents(invoice)),
    creditedAmount: money(creditedCents(invoice)),
    amountDue: money(dueCents(invoice)),
    paymentMethod: invoice.paymentMethod,
    lineAmounts: invoice.lines.map((line) => money(lineCents(line).amount)),
    etag: `"${invoice.version}"`,
  };
}

function actual(res: { body: Record<string, unknown>; etag: string | null }) {
  const body = res.body;
  return {
    id: body.id,
    status: body.status,
    invoiceNumber: body.invoiceNumber,
    subtotal: body.subtotal,
    taxTotal: body.taxTotal,
    total: body.total,
    amountPaid: body.amountPaid,
    creditedAmount: body.creditedAmount,
    amountDue: body.amountDue,
    paymentMethod: body.paymentMethod,
    lineAmounts: (body.lineItems as { amount: string }[]).map((l) => l.amount),
    etag: res.etag,
  };
}

const shown = (res: TestResponse) => actual({ body: res.body, etag: res.headers.get("etag") });

/**
 * A shown invoice must be the model's. The message names where (the command and which run: without
 * or with faults) and every field that differs, so a failure kept from a CI log says what broke.
 */
function expectModel(got: ReturnType<typeof actual>, want: ReturnType<typeof expected>, where: string): void {
  const differing = (Object.keys(want) as (keyof typeof want)[])
    .filter((field) => JSON.stringify(got[field]) !== JSON.stringify(want[field]))
    .map((field) => `${field}: API ${JSON.stringify(got[field])}, model ${JSON.stringify(want[field])}`);
  expect(got, `${where} — differs in ${differing.join("; ")}`).toEqual(want);
}

const runName = (r: Real) => (r.faulty ? "run with DynamoDB faults" : "run without faults");

// ---------------------------------------------------------------- the system under test

interface Real {
  user: TestUser;
  clientId: number;
  /** Whether DynamoDB faults are on: only then may a write answer 503. */
  faulty: boolean;
  /**
   * The client API.md invites: a keyed POST is retried on 503 under its key until the answer is
   * definite, and so are reads; any other write's 503 is returned (its outcome is unknown).
   */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<TestResponse>;
}

/** Expected answer of one step: a status and, for errors, the problem code. */
function expectAnswer(res: TestResponse, status: number, code: string | undefined, where: string): void {
  const got = `${res.status} ${res.status >= 400 ? res.body?.code : ""}`.trim();
  expect(got, `${where}: the answer's status — ${res.text.slice(0, 300)}`).toBe(`${status} ${code ?? ""}`.trim());
  if (status >= 400) problemShape(res);
}

const pick = (m: Model, slot: number): ModelInvoice | undefined =>
  m.invoices.length ? m.invoices[slot % m.invoices.length] : undefined;

/** The id a command acts on: a model invoice, or one that never existed. */
const idOf = (m: Model, slot: number): number => pick(m, slot)?.id ?? 999_999;

/** Any action on an id that was never created: 404, whatever the invoice would have been. */
class Missing implements Cmd {
  constructor(
    readonly method: string,
    readonly suffix: string,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const id = Math.max(0, ...m.invoices.map((i) => i.id)) + 1000;
    const body =
      this.method === "PATCH"
        ? { notes: "x" }
        : this.suffix === "/mark-paid"
          ? { paymentMethod: "cash" }
          : this.suffix === "/payments"
            ? { amount: "1.00", paymentMethod: "cash" }
            : this.suffix === "/credit-notes"
              ? {}
              : undefined;
    expectAnswer(
      await r.call(this.method, `/invoices/${id}${this.suffix}`, body),
      404,
      "not_found",
      `${this} in the ${runName(r)}`,
    );
  }
  toString = () => `missing(${this.method} ${this.suffix})`;
}

let keys = 0;
const keyHeader = (keyed: boolean): Record<string, string> =>
  keyed ? { "Idempotency-Key": `model-${++keys}-${Date.now()}` } : {};

type Cmd = fc.AsyncCommand<Model, Real>;

class Create implements Cmd {
  constructor(
    readonly lines: LineSpec[],
    readonly keyed: boolean,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const res = await r.call(
      "POST",
      "/invoices",
      { clientId: r.clientId, lineItems: this.lines },
      keyHeader(this.keyed),
    );
    const adopt = (id: number) => {
      expect(m.invoices.map((i) => i.id)).not.toContain(id);
      const invoice: ModelInvoice = {
        id,
        payments: [],
        status: "draft",
        lines: this.lines,
        invoiceNumber: null,
        paymentMethod: null,
        version: 1,
        deleted: false,
        credits: [],
        linesCredited: false,
      };
      m.invoices.push(invoice);
      return invoice;
    };
    if (res.status === 503 && r.faulty) {
      // Unknown outcome: at most one invoice may have appeared, and then whole.
      const list = await r.call("GET", "/invoices?limit=200");
      const known = new Set(m.invoices.map((i) => i.id));
      const fresh = (list.body as { id: number }[]).filter((i) => !known.has(i.id));
      expect(fresh.length).toBeLessThanOrEqual(1);
      if (fresh[0]) {
        const invoice = adopt(fresh[0].id);
        expectModel(
          shown(await r.call("GET", `/invoices/${invoice.id}`)),
          expected(invoice),
          `${this} (503) in the ${runName(r)}`,
        );
      }
      return;
    }
    expectAnswer(res, 201, undefined, `${this} in the ${runName(r)}`);
    expectModel(shown(res), expected(adopt(res.body.id)), `${this} in the ${runName(r)}`);
  }
  toString = () => `create(${JSON.stringify(this.lines)}${this.keyed ? ", keyed" : ""})`;
}

/**
 * Create, finalize and send in a row: an invoice that takes payments. (Three separate commands on
 * one slot out of eight are rare, and payments need a sent invoice.)
 */
class CreateSent implements Cmd {
  constructor(
    readonly lines: LineSpec[],
    readonly keyed: boolean,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    await new Create(this.lines, this.keyed).run(m, r);
    const slot = m.invoices.length - 1;
    if (slot < 0) return;
    await new Finalize(slot, this.keyed).run(m, r);
    await new Send(slot, this.keyed).run(m, r);
  }
  toString = () => `createSent(${JSON.stringify(this.lines)}${this.keyed ? ", keyed" : ""})`;
}

interface Verdict {
  status: number;
  code?: string;
  apply?: () => void;
}

/** A command on one existing (or deleted, or never created) invoice. */
abstract class OnInvoice implements Cmd {
  constructor(
    readonly slot: number,
    readonly keyed = false,
  ) {}
  // Only once there is an invoice (deleted ones included); ids never created: see Missing.
  check = (m: Readonly<Model>) => m.invoices.length > 0;
  abstract act(r: Real, id: number, invoice: ModelInvoice | undefined): Promise<TestResponse>;
  /** The model's verdict for an invoice that exists: the answer, and the change when it succeeds. */
  abstract rule(invoice: ModelInvoice, m: Model): Verdict;
  async run(m: Model, r: Real) {
    const invoice = pick(m, this.slot);
    const res = await this.act(r, idOf(m, this.slot), invoice);
    if (res.status === 503 && r.faulty) return this.reconcile(m, r, invoice);
    const where = `${this} in the ${runName(r)}`;
    if (!invoice || invoice.deleted) return expectAnswer(res, 404, "not_found", where);
    const verdict = this.rule(invoice, m);
    expectAnswer(res, verdict.status, verdict.code, where);
    verdict.apply?.();
    if (res.status === 200) expectModel(shown(res), expected(invoice), where);
  }

  /**
   * A write answered 503 (faults on, no key): it happened wholly or not at all. The record must be
   * exactly the model before or the model after, and the model follows what happened.
   */
  private async reconcile(m: Model, r: Real, invoice: ModelInvoice | undefined) {
    const now = await r.call("GET", `/invoices/${idOf(m, this.slot)}`);
    if (!invoice || invoice.deleted)
      return expectAnswer(now, 404, "not_found", `${this} (503, reconciled) in the ${runName(r)}`);
    const verdict = this.rule(invoice, m);
    const before = { ...invoice };
    const numbers = { lastNumber: m.lastNumber, lastCreditNote: m.lastCreditNote };
    const pre = expected(invoice);
    if (now.status === 404) {
      expect(verdict.status, "only a delete may make an invoice disappear").toBe(204);
      verdict.apply?.();
      return;
    }
    if (verdict.apply && verdict.status < 400) {
      verdict.apply();
      if (isEqual(shown(now), expected(invoice))) return;
      Object.assign(invoice, before);
      Object.assign(m, numbers);
    }
    expectModel(shown(now), pre, `${this} (503, reconciled) in the ${runName(r)}`);
  }
  toString = () => `${this.constructor.name.toLowerCase()}(#${this.slot}${this.keyed ? ", keyed" : ""})`;
}

const isEqual = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

class Get extends OnInvoice {
  act = (r: Real, id: number) => r.call("GET", `/invoices/${id}`);
  rule = () => ({ status: 200 });
}

type IfMatch = "none" | "current" | "stale";

class Patch extends OnInvoice {
  constructor(
    slot: number,
    readonly lines: LineSpec[],
    readonly ifMatch: IfMatch,
  ) {
    super(slot);
  }
  act = (r: Real, id: number, invoice: ModelInvoice | undefined) => {
    const version = invoice?.version ?? 1;
    const headers: Record<string, string> =
      this.ifMatch === "none" ? {} : { "If-Match": `"${this.ifMatch === "current" ? version : version + 7}"` };
    return r.call("PATCH", `/invoices/${id}`, { lineItems: this.lines }, headers);
  };
  rule = (invoice: ModelInvoice): Verdict => {
    // 412 ranks before 422.
    if (this.ifMatch === "stale") return { status: 412, code: "precondition_failed" };
    if (invoice.status !== "draft") return { status: 422, code: "invoice_not_editable" };
    return {
      status: 200,
      apply: () => void Object.assign(invoice, { lines: this.lines, version: invoice.version + 1 }),
    };
  };
  override toString = () => `patch(#${this.slot}, ${JSON.stringify(this.lines)}, if-match ${this.ifMatch})`;
}

class Finalize extends OnInvoice {
  act = (r: Real, id: number) => r.call("POST", `/invoices/${id}/finalize`, undefined, keyHeader(this.keyed));
  rule(invoice: ModelInvoice, m: Model): Verdict {
    if (invoice.status !== "draft") return { status: 422, code: "invalid_transition" };
    if (invoice.lines.length === 0) return { status: 422, code: "empty_invoice" };
    if (totals(invoice.lines).total < 0n) return { status: 422, code: "negative_total" };
    return {
      status: 200,
      apply: () => {
        m.lastNumber++;
        Object.assign(invoice, {
          status: "finalized",
          invoiceNumber: `INV-${String(m.lastNumber).padStart(6, "0")}`,
          version: invoice.version + 1,
        });
      },
    };
  }
}

/** A transition `from` → `to`, one version step. */
const step = (invoice: ModelInvoice, from: (s: Status) => boolean, to: Partial<ModelInvoice>): Verdict =>
  !from(invoice.status)
    ? { status: 422, code: "invalid_transition" }
    : { status: 200, apply: () => void Object.assign(invoice, to, { version: invoice.version + 1 }) };

class Send extends OnInvoice {
  act = (r: Real, id: number) => r.call("POST", `/invoices/${id}/send`, undefined, keyHeader(this.keyed));
  rule = (invoice: ModelInvoice) => step(invoice, (s) => s === "finalized", { status: "sent" });
}

class MarkPaid extends OnInvoice {
  constructor(
    slot: number,
    keyed: boolean,
    readonly method: string,
  ) {
    super(slot, keyed);
  }
  act = (r: Real, id: number) =>
    r.call("POST", `/invoices/${id}/mark-paid`, { paymentMethod: this.method }, keyHeader(this.keyed));
  // A payment of the whole amount due (none when nothing is due).
  rule = (invoice: ModelInvoice) =>
    step(invoice, (s) => s === "sent" || s === "overdue", {
      status: "paid",
      paymentMethod: this.method,
      payments:
        dueCents(invoice) > 0n
          ? [...invoice.payments, { cents: dueCents(invoice), method: this.method }]
          : invoice.payments,
    });
  override toString = () => `markPaid(#${this.slot}, ${this.method}${this.keyed ? ", keyed" : ""})`;
}

type PayAmount = "due" | "half" | "cent" | "over";

/** POST /invoices/{id}/payments of an amount chosen from what the model says is due. */
class Pay extends OnInvoice {
  constructor(
    slot: number,
    keyed: boolean,
    readonly amount: PayAmount,
    readonly method: string,
  ) {
    super(slot, keyed);
  }
  cents(invoice: ModelInvoice | undefined): bigint {
    const due = invoice ? dueCents(invoice) : 100n;
    const cents = { due, half: due / 2n, cent: 1n, over: due + 1n }[this.amount];
    return cents > 0n ? cents : 1n;
  }
  act = (r: Real, id: number, invoice: ModelInvoice | undefined) =>
    r.call(
      "POST",
      `/invoices/${id}/payments`,
      { amount: money(this.cents(invoice)), paymentMethod: this.method },
      keyHeader(this.keyed),
    );
  rule = (invoice: ModelInvoice): Verdict => {
    if (invoice.status !== "sent" && invoice.status !== "overdue") return { status: 422, code: "invalid_transition" };
    const cents = this.cents(invoice);
    if (cents > dueCents(invoice)) return { status: 422, code: "overpayment" };
    const payments = [...invoice.payments, { cents, method: this.method }];
    const complete = cents === dueCents(invoice); // amountDue reaches 0, credit notes counted
    return {
      status: 201,
      apply: () =>
        void Object.assign(invoice, {
          payments,
          version: invoice.version + 1,
          ...(complete ? { status: "paid", paymentMethod: this.method } : {}),
        }),
    };
  };
  override toString = () => `pay(#${this.slot}, ${this.amount}, ${this.method}${this.keyed ? ", keyed" : ""})`;
}

/** DELETE of the `which`-th payment of the invoice (the model's order is the list's: oldest first). */
class DeletePayment extends OnInvoice {
  constructor(
    slot: number,
    readonly which: number,
  ) {
    super(slot);
  }
  async act(r: Real, id: number, invoice: ModelInvoice | undefined) {
    const list = invoice && !invoice.deleted ? await r.call("GET", `/invoices/${id}/payments`) : undefined;
    const payments = (list?.status === 200 ? list.body : []) as { id: number }[];
    const target = payments.length ? payments[this.which % payments.length]!.id : 999_999;
    return r.call("DELETE", `/invoices/${id}/payments/${target}`);
  }
  rule = (invoice: ModelInvoice): Verdict => {
    if (invoice.payments.length === 0) return { status: 404, code: "not_found" };
    if (invoice.status === "void") return { status: 422, code: "invalid_transition" };
    const index = this.which % invoice.payments.length;
    const payments = invoice.payments.filter((_, i) => i !== index);
    // A paid invoice with something due again reopens: sent (the model's due dates are a month after
    // finalize, never passed). Its credit notes may still cover what the payment paid.
    const stillCovered =
      payments.reduce((sum, p) => sum + p.cents, 0n) + creditedCents(invoice) >= totals(invoice.lines).total;
    const reopen = invoice.status === "paid" && !stillCovered ? { status: "sent" as const, paymentMethod: null } : {};
    return {
      status: 204,
      apply: () => void Object.assign(invoice, { payments, version: invoice.version + 1, ...reopen }),
    };
  };
  override toString = () => `deletePayment(#${this.slot}, ${this.which})`;
}

type CreditKind = "whole" | "rest" | "half" | "cent" | "over";

/**
 * POST /invoices/{id}/credit-notes: every line wholly (no body), or a free line of an amount chosen
 * from what is left to credit. Wholly credited → void; nothing left due on a sent invoice → paid with
 * the last payment's method (or none).
 */
class CreditNote extends OnInvoice {
  constructor(
    slot: number,
    keyed: boolean,
    readonly kind: CreditKind,
  ) {
    super(slot, keyed);
  }
  left = (invoice: ModelInvoice | undefined): bigint =>
    invoice ? totals(invoice.lines).total - creditedCents(invoice) : 100n;
  cents(invoice: ModelInvoice | undefined): bigint {
    const left = this.left(invoice);
    const cents = { whole: left, rest: left, half: left / 2n, cent: 1n, over: left + 1n }[this.kind];
    return cents > 0n ? cents : 1n;
  }
  act = (r: Real, id: number, invoice: ModelInvoice | undefined) =>
    r.call(
      "POST",
      `/invoices/${id}/credit-notes`,
      this.kind === "whole"
        ? {}
        : { lineItems: [{ description: "Goodwill", unitPrice: money(this.cents(invoice)) }], reason: "other" },
      keyHeader(this.keyed),
    );
  rule = (invoice: ModelInvoice, m: Model): Verdict => {
    if (!["finalized", "sent", "overdue", "paid"].includes(invoice.status))
      return { status: 422, code: "invalid_transition" };
    const total = totals(invoice.lines).total;
    let cents: bigint;
    if (this.kind === "whole") {
      if (invoice.linesCredited || invoice.lines.length === 0) return { status: 422, code: "empty_credit_note" };
      cents = total; // every line's amount and tax, by the same arithmetic as the invoice's
      if (cents <= 0n) return { status: 422, code: "empty_credit_note" };
    } else {
      cents = this.cents(invoice);
    }
    if (cents > total - creditedCents(invoice)) return { status: 422, code: "credit_exceeds_invoice" };
    return {
      status: 201,
      apply: () => {
        m.lastCreditNote++;
        const credits = [...invoice.credits, cents];
        const credited = credits.reduce((sum, c) => sum + c, 0n);
        const paid = paidCents(invoice);
        const next: Partial<ModelInvoice> = {
          credits,
          linesCredited: invoice.linesCredited || this.kind === "whole",
          version: invoice.version + 1,
        };
        if (credited >= total) next.status = "void";
        else if ((invoice.status === "sent" || invoice.status === "overdue") && paid + credited >= total) {
          next.status = "paid";
          next.paymentMethod = invoice.payments.at(-1)?.method ?? null;
        }
        Object.assign(invoice, next);
      },
    };
  };
  override toString = () => `creditNote(#${this.slot}, ${this.kind}${this.keyed ? ", keyed" : ""})`;
}

class Void extends OnInvoice {
  act = (r: Real, id: number) => r.call("POST", `/invoices/${id}/void`, undefined, keyHeader(this.keyed));
  rule = (invoice: ModelInvoice) => step(invoice, (s) => s !== "void", { status: "void" });
}

class Delete extends OnInvoice {
  act = (r: Real, id: number) => r.call("DELETE", `/invoices/${id}`);
  rule = (invoice: ModelInvoice): Verdict =>
    invoice.status !== "draft"
      ? { status: 422, code: "invoice_not_editable" }
      : { status: 204, apply: () => void (invoice.deleted = true) };
}

class List implements Cmd {
  constructor(readonly status: Status) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const res = await r.call("GET", `/invoices?status=${this.status}&limit=200`);
    expectAnswer(res, 200, undefined, `${this} in the ${runName(r)}`);
    // Newest first; created one after another on a clock that never goes back, so by id descending.
    const want = m.invoices
      .filter((i) => !i.deleted && i.status === this.status)
      .map((i) => i.id)
      .sort((a, b) => b - a);
    expect(res.body.map((i: { id: number }) => i.id)).toEqual(want);
  }
  toString = () => `list(${this.status})`;
}

// ---------------------------------------------------------------- arbitraries

const lineArb: fc.Arbitrary<LineSpec> = fc.record({
  description: fc.constantFrom("Widget", "Consulting", "Discount", "Ünïcode ✓"),
  quantity: decimalString({ maxWhole: 1000n, maxDecimals: 2, positive: true }),
  unitPrice: decimalString({ maxWhole: 100_000n, maxDecimals: 2 }),
  taxRate: fc
    .integer({ min: 0, max: 1_000_000 })
    .map((n) => `${Math.floor(n / 1_000_000)}.${String(n % 1_000_000).padStart(6, "0")}`),
});
const linesArb = fc.array(lineArb, { maxLength: 3 });
const payableLinesArb = fc.array(
  lineArb.chain((line) =>
    decimalString({ maxWhole: 10_000n, maxDecimals: 2, positive: true }).map((unitPrice) => ({ ...line, unitPrice })),
  ),
  { minLength: 1, maxLength: 2 },
);
const slotArb = fc.nat({ max: 7 });

const commandsArb = (maxCommands: number) =>
  fc.commands(
    [
      // Twice: creates come often enough for the other commands to have invoices to act on.
      fc.tuple(linesArb, fc.boolean()).map(([lines, keyed]) => new Create(lines, keyed)),
      fc.tuple(linesArb, fc.boolean()).map(([lines, keyed]) => new Create(lines, keyed)),
      fc.tuple(payableLinesArb, fc.boolean()).map(([lines, keyed]) => new CreateSent(lines, keyed)),
      fc
        .constantFrom(
          ["GET", ""],
          ["PATCH", ""],
          ["DELETE", ""],
          ["POST", "/finalize"],
          ["POST", "/send"],
          ["POST", "/mark-paid"],
          ["POST", "/void"],
          ["POST", "/payments"],
          ["POST", "/credit-notes"],
        )
        .map(([method, suffix]) => new Missing(method!, suffix!)),
      slotArb.map((s) => new Get(s)),
      fc
        .tuple(slotArb, linesArb, fc.constantFrom<IfMatch>("none", "current", "current", "stale"))
        .map(([s, lines, ifMatch]) => new Patch(s, lines, ifMatch)),
      fc.tuple(slotArb, fc.boolean()).map(([s, keyed]) => new Finalize(s, keyed)),
      fc.tuple(slotArb, fc.boolean()).map(([s, keyed]) => new Send(s, keyed)),
      fc
        .tuple(slotArb, fc.boolean(), fc.constantFrom("cash", "check", "bank_transfer", "other"))
        .map(([s, keyed, method]) => new MarkPaid(s, keyed, method)),
      fc
        .tuple(
          slotArb,
          fc.boolean(),
          fc.constantFrom<PayAmount>("due", "half", "half", "cent", "over"),
          fc.constantFrom("cash", "check"),
        )
        .map(([s, keyed, amount, method]) => new Pay(s, keyed, amount, method)),
      fc
        .tuple(
          slotArb,
          fc.boolean(),
          fc.constantFrom<PayAmount>("half", "cent"),
          fc.constantFrom("bank_transfer", "other"),
        )
        .map(([s, keyed, amount, method]) => new Pay(s, keyed, amount, method)),
      fc.tuple(slotArb, fc.nat({ max: 3 })).map(([s, which]) => new DeletePayment(s, which)),
      fc
        .tuple(
          slotArb,
          fc.boolean(),
          fc.constantFrom<CreditKind>("whole", "whole", "rest", "half", "half", "cent", "over"),
        )
        .map(([s, keyed, kind]) => new CreditNote(s, keyed, kind)),
      fc.tuple(slotArb, fc.boolean()).map(([s, keyed]) => new Void(s, keyed)),
      slotArb.map((s) => new Delete(s)),
      fc.constantFrom<Status>("draft", "finalized", "sent", "paid", "void").map((s) => new List(s)),
    ],
    { maxCommands, size: "max" },
  );

// ---------------------------------------------------------------- the runs

let world: FaultyEnv;
let env: TestEnv;

beforeAll(async () => {
  world = await createFaultyEnv({ silenceWarnings: true });
  env = world.env;
});

afterAll(async () => {
  await world?.close();
});

/**
 * Time: a run takes a second or two; a failure then shrinks, run after run. The property stops
 * before the test's timeout so a shrink cut short still reports its counterexample. A slow machine
 * is not a failure: runs cut short by the time limit without a counterexample pass
 * (`markInterruptAsFailure: false`); a counterexample found before it fails as always.
 */
const TIMEOUT = 180_000 + RUNS * 6_000;
const budget = { interruptAfterTimeLimit: TIMEOUT - 15_000, markInterruptAsFailure: false };

async function newReal(faulty: boolean): Promise<Real> {
  const user = await env.user();
  const created = await user.call("POST", "/clients", { name: "Model Client", email: "model@client.test" });
  expect(created.status).toBe(201);
  if (!faulty) return { user, clientId: created.body.id, faulty, call: user.call };
  const through = world.as(user);
  return {
    user,
    clientId: created.body.id,
    faulty,
    async call(method, path, body, headers = {}) {
      const retry = method === "GET" || headers["Idempotency-Key"] !== undefined;
      for (let attempt = 1; ; attempt++) {
        const res = await through.call(method, path, body, headers);
        if (res.status === 503) expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
        if (retry && res.status === 409 && res.body?.code === "idempotency_key_in_use") {
          // A claim left behind by an attempt whose clean-up failed too: it frees itself after its lease.
          env.clock.advance(LEASE_MS + 1);
        } else if (!retry || res.status !== 503) {
          return res;
        }
        if (attempt >= 12) throw new Error(`${method} ${path}: still ${res.status} after ${attempt} attempts`);
      }
    },
  };
}

/** After a run: the table holds exactly the model, numbers gapless from 1, the counter at the last. */
async function assertTableIsModel(m: Model, r: Real): Promise<void> {
  const all = await r.user.call("GET", "/invoices?limit=200");
  expect(all.status).toBe(200);
  const live = m.invoices.filter((i) => !i.deleted);
  expect(all.body.map((i: { id: number }) => i.id).sort((a: number, b: number) => a - b)).toEqual(
    live.map((i) => i.id),
  );
  for (const invoice of live) {
    expectModel(
      shown(await r.user.call("GET", `/invoices/${invoice.id}`)),
      expected(invoice),
      `the table after the ${runName(r)}`,
    );
    // No payment lost or doubled, and amountPaid is exactly the sum of those counted.
    const payments = await r.user.call("GET", `/invoices/${invoice.id}/payments`);
    const listed = (payments.body as { amount: string; paymentMethod: string; status: string }[]).map((p) => [
      p.amount,
      p.paymentMethod,
      p.status,
    ]);
    expect(listed).toEqual(invoice.payments.map((p) => [money(p.cents), p.method, "succeeded"]));
    const sum = (payments.body as { amount: string }[]).reduce((total, p) => total + scaledDigits(p.amount, 2), 0n);
    expect(money(sum)).toBe((await r.user.call("GET", `/invoices/${invoice.id}`)).body.amountPaid);
    // No credit note lost or doubled: the invoice's are the model's, oldest first.
    const notes = await r.user.call("GET", `/invoices/${invoice.id}/credit-notes`);
    expect((notes.body as { total: string }[]).map((n) => n.total)).toEqual(invoice.credits.map(money));
  }
  const credited = await r.user.call("GET", "/credit-notes?limit=200");
  expect(credited.body.map((n: { creditNoteNumber: string }) => n.creditNoteNumber).sort()).toEqual(
    Array.from({ length: m.lastCreditNote }, (_, i) => `CN-${String(i + 1).padStart(6, "0")}`),
  );
  const numbers = all.body
    .map((i: { invoiceNumber: string | null }) => i.invoiceNumber)
    .filter(Boolean)
    .sort();
  expect(numbers).toEqual(Array.from({ length: m.lastNumber }, (_, i) => `INV-${String(i + 1).padStart(6, "0")}`));
  const counter = await env.deps.db.doc.send(
    new GetCommand({ TableName: env.tableName, Key: counterKey(r.user.userId, "invoiceNumber"), ConsistentRead: true }),
  );
  expect(Number(counter.Item?.value ?? 0)).toBe(m.lastNumber);
}

describe("invoices against the reference model", () => {
  // The sequence that once made this test fail "under load": rare at random, so pinned here.
  it("a paid invoice voided keeps what was paid", async () => {
    const real = await newReal(false);
    const model: Model = { invoices: [], lastNumber: 0, lastCreditNote: 0 };
    const line: LineSpec = { description: "Widget", quantity: "2", unitPrice: "10.50", taxRate: "0.190000" };
    const cmds = [
      new Create([line], false),
      new Finalize(0),
      new Send(0),
      new MarkPaid(0, true, "cash"),
      new Void(0),
      new Get(0),
    ];
    await fc.asyncModelRun(() => ({ model, real }), cmds);
    await assertTableIsModel(model, real);
  });

  // Credit notes through the model: a partial payment, free credits that leave nothing due (paid,
  // with the payment's method), the payment deleted (due again: sent), every line refused (more than
  // is left), the rest credited (void), then nothing more.
  it("credit notes: paid by a credit, reopened, wholly credited to void", async () => {
    const real = await newReal(false);
    const model: Model = { invoices: [], lastNumber: 0, lastCreditNote: 0 };
    const line: LineSpec = { description: "Widget", quantity: "4", unitPrice: "25.00", taxRate: "0.100000" };
    const cmds = [
      new CreateSent([line], false),
      new Pay(0, false, "half", "check"),
      new CreditNote(0, true, "over"),
      new CreditNote(0, false, "cent"),
      new CreditNote(0, true, "half"),
      new Pay(0, false, "due", "cash"),
      new DeletePayment(0, 1),
      new CreditNote(0, false, "whole"),
      new CreditNote(0, true, "rest"),
      new CreditNote(0, false, "half"),
      new Get(0),
    ];
    await fc.asyncModelRun(() => ({ model, real }), cmds);
    expect(model.lastCreditNote).toBe(3);
    expect(model.invoices[0]).toMatchObject({ status: "void" });
    await assertTableIsModel(model, real);
  });

  it(
    "agree on every answer, state and amount",
    async () => {
      await fc.assert(
        fc.asyncProperty(commandsArb(30), async (cmds) => {
          const real = await newReal(false);
          const model: Model = { invoices: [], lastNumber: 0, lastCreditNote: 0 };
          await fc.asyncModelRun(() => ({ model, real }), cmds);
          await assertTableIsModel(model, real);
        }),
        { numRuns: RUNS, ...budget },
      );
    },
    TIMEOUT,
  );

  it(
    "agree under random DynamoDB faults: no wrong answer, no half write, no duplicate, no gap",
    async () => {
      await fc.assert(
        fc.asyncProperty(commandsArb(20), fc.integer(), async (cmds, seed) => {
          const real = await newReal(true);
          const rule = world.proxy.inject({ match: () => true, fault: chaos(prng(seed)), times: Infinity });
          const model: Model = { invoices: [], lastNumber: 0, lastCreditNote: 0 };
          try {
            await fc.asyncModelRun(() => ({ model, real }), cmds);
          } finally {
            rule.remove();
          }
          await assertTableIsModel(model, real);
        }),
        { numRuns: Math.max(3, Math.ceil(RUNS / 3)), ...budget },
      );
    },
    TIMEOUT,
  );
});
