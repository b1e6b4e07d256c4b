import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import { invoiceKey } from "@invoicing/core/invoices/model";
import { countChange } from "@invoicing/core/reports/stream";
import { newClient, ok } from "../invoices/fixtures";
import { createTestEnv, expectProblem, type TestEnv, type TestUser } from "../support/env";

/**
 * API.md section 18 through HTTP: the monthly figures after invoices issued with past dates,
 * payments with past paidAt, a deletion, a void; each figure checked to the cent against numbers
 * worked out by hand; the stream's records delivered again change nothing; bad input is a 400 that
 * names the parameter.
 */
let env: TestEnv;

beforeAll(async () => {
  env = await createTestEnv({ now: "2026-11-22T09:30:00.000Z" });
});

const zero = { invoiced: "0.00", credited: "0.00", voided: "0.00", net: "0.00", collected: "0.00" };
const counts0 = { invoiceCount: 0, creditNoteCount: 0, paymentCount: 0 };

async function issued(user: TestUser, clientId: number, body: Record<string, unknown>, send = true) {
  const draft = ok(await user.call("POST", "/invoices", { clientId, ...body }), 201).body;
  ok(await user.call("POST", `/invoices/${draft.id}/finalize`));
  if (send) ok(await user.call("POST", `/invoices/${draft.id}/send`, { to: "ap@example.test" }));
  return draft.id as number;
}

describe("revenue and tax", () => {
  let user: TestUser;
  let a: number;
  let b: number;
  let c: number;

  beforeAll(async () => {
    user = await env.user();
    const client = await newClient(user, { currency: "EUR" });
    // A: 2 × 50.00 at 19 % = 100.00 + 19.00, issued in September.
    a = await issued(user, client.id, {
      issueDate: "2026-09-10",
      dueDate: "2026-10-10",
      lineItems: [{ description: "Design", quantity: "2", unitPrice: "50.00", taxRate: "0.19" }],
    });
    // B: 10.00 at 7 % + 30.00 at 19 % = 40.00 + 0.70 + 5.70 = 46.40, issued in October.
    b = await issued(user, client.id, {
      issueDate: "2026-10-03T12:00:00Z",
      lineItems: [
        { description: "Book", unitPrice: "10.00", taxRate: "0.07" },
        { description: "Hours", unitPrice: "30.00", taxRate: "0.19" },
      ],
    });
    // C: USD 200.00 untaxed, issued in August, voided now (November).
    c = await issued(user, client.id, {
      currency: "USD",
      issueDate: "2026-08-31T23:59:59Z",
      lineItems: [{ description: "Retainer", unitPrice: "200.00" }],
    });
    ok(await user.call("POST", `/invoices/${c}/void`));
    // A draft counts nothing; a voided draft neither.
    const draft = ok(
      await user.call("POST", "/invoices", {
        clientId: client.id,
        issueDate: "2026-09-01",
        lineItems: [{ description: "x", unitPrice: "1000.00" }],
      }),
      201,
    ).body;
    ok(await user.call("POST", `/invoices/${draft.id}/void`));
    // Payments: 50.00 on A in October, 69.00 on A in November (A paid), 20.00 on B in October, deleted.
    ok(
      await user.call("POST", `/invoices/${a}/payments`, {
        amount: "50.00",
        paymentMethod: "cash",
        paidAt: "2026-10-05",
      }),
      201,
    );
    ok(
      await user.call("POST", `/invoices/${a}/payments`, {
        amount: "69.00",
        paymentMethod: "bank_transfer",
        paidAt: "2026-11-02T08:00:00Z",
      }),
      201,
    );
    const gone = ok(
      await user.call("POST", `/invoices/${b}/payments`, {
        amount: "20.00",
        paymentMethod: "cash",
        paidAt: "2026-10-20",
      }),
      201,
    ).body;
    ok(
      await user.call("POST", `/invoices/${b}/payments`, {
        amount: "6.40",
        paymentMethod: "cash",
        paidAt: "2026-10-21",
      }),
      201,
    );
    ok(await user.call("DELETE", `/invoices/${b}/payments/${gone.id}`), 204);
    await env.drainStream();
  });

  const expectedRevenue = [
    { month: "2026-08", currency: "EUR", ...zero, ...counts0 },
    { month: "2026-08", currency: "USD", ...zero, invoiced: "200.00", net: "200.00", ...counts0, invoiceCount: 1 },
    { month: "2026-09", currency: "EUR", ...zero, invoiced: "119.00", net: "119.00", ...counts0, invoiceCount: 1 },
    { month: "2026-09", currency: "USD", ...zero, ...counts0 },
    {
      month: "2026-10",
      currency: "EUR",
      ...zero,
      invoiced: "46.40",
      net: "46.40",
      collected: "56.40",
      ...counts0,
      invoiceCount: 1,
      paymentCount: 2,
    },
    { month: "2026-10", currency: "USD", ...zero, ...counts0 },
    { month: "2026-11", currency: "EUR", ...zero, collected: "69.00", ...counts0, paymentCount: 1 },
    { month: "2026-11", currency: "USD", ...zero, voided: "200.00", net: "-200.00", ...counts0 },
  ];
  const expectedTax = [
    { currency: "EUR", taxCategory: "standard", taxRate: "0.19", taxableAmount: "130.00", taxAmount: "24.70" },
    { currency: "EUR", taxCategory: "standard", taxRate: "0.07", taxableAmount: "10.00", taxAmount: "0.70" },
  ];

  it("counts every document in the month it was issued, payments by paidAt as they stand now", async () => {
    const revenue = ok(await user.call("GET", "/reports/revenue?from=2026-08&to=2026-11")).body;
    expect(revenue).toEqual(expectedRevenue);
    // The void's USD zero-rated entry is issued in August and taken off in November: over both, nothing.
    expect(ok(await user.call("GET", "/reports/tax?from=2026-08&to=2026-11")).body).toEqual(expectedTax);
    expect(ok(await user.call("GET", "/reports/tax?from=2026-08&to=2026-08")).body).toEqual([
      { currency: "USD", taxCategory: "zero_rated", taxRate: "0.00", taxableAmount: "200.00", taxAmount: "0.00" },
    ]);
    expect(ok(await user.call("GET", "/reports/tax?from=2026-11&to=2026-11")).body).toEqual([
      { currency: "USD", taxCategory: "zero_rated", taxRate: "0.00", taxableAmount: "-200.00", taxAmount: "0.00" },
    ]);
  });

  it("the stream's records delivered again, from the stream's start, change nothing", async () => {
    const again = env.newStreamReader();
    try {
      expect(await again.drain()).toBeGreaterThan(20);
    } finally {
      again.close();
    }
    expect(ok(await user.call("GET", "/reports/revenue?from=2026-08&to=2026-11")).body).toEqual(expectedRevenue);
    expect(ok(await user.call("GET", "/reports/tax?from=2026-08&to=2026-11")).body).toEqual(expectedTax);
  });

  it("defaults to the last 12 months up to the current one", async () => {
    const revenue = ok(await user.call("GET", "/reports/revenue")).body as { month: string; currency: string }[];
    expect(revenue.length).toBe(24);
    expect(revenue[0]).toMatchObject({ month: "2025-12", currency: "EUR", invoiced: "0.00" });
    expect(revenue.at(-1)).toMatchObject({ month: "2026-11", currency: "USD", voided: "200.00" });
  });

  it("gives CSV for the accountant", async () => {
    const res = await user.call("GET", "/reports/revenue?from=2026-10&to=2026-10&format=csv");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.text).toBe(
      "month,currency,invoiced,credited,voided,net,collected,invoiceCount,creditNoteCount,paymentCount\r\n" +
        "2026-10,EUR,46.40,0.00,0.00,46.40,56.40,1,0,2\r\n", // no USD: none of its activity is in October
    );
    const tax = await user.call("GET", "/reports/tax?from=2026-08&to=2026-11&format=csv");
    expect(tax.text).toBe(
      "currency,taxCategory,taxRate,taxableAmount,taxAmount\r\n" +
        "EUR,standard,0.19,130.00,24.70\r\nEUR,standard,0.07,10.00,0.70\r\n",
    );
  });

  it("another user sees none of it", async () => {
    const other = await env.user();
    expect(ok(await other.call("GET", "/reports/revenue?from=2026-08&to=2026-11")).body).toEqual([]);
    expect(ok(await other.call("GET", "/reports/tax?from=2026-08&to=2026-11")).body).toEqual([]);
  });
});

describe("bad input is a 400 naming the parameter", () => {
  let user: TestUser;
  beforeAll(async () => {
    user = await env.user();
  });

  it.for([
    ["/reports/revenue?from=2026-13", "from"],
    ["/reports/revenue?from=2026-1", "from"],
    ["/reports/tax?to=26-01", "to"],
    ["/reports/revenue?to=2026-02-01", "to"],
    ["/reports/revenue?from=2026-05&to=2026-04", "from"],
    ["/reports/tax?from=2023-01&to=2026-02", "from"],
    ["/reports/revenue?format=xlsx", "format"],
    ["/reports/aging?asOf=yesterday", "asOf"],
    ["/reports/aging?asOf=2026-02-30", "asOf"],
  ] as const)("%s → %s", async ([path, parameter]) => {
    const problem = expectProblem(await user.call("GET", path), 400, "validation_error");
    expect(problem.errors?.[0]?.path).toBe(parameter);
  });

  it("36 months apart is the most", async () => {
    ok(await user.call("GET", "/reports/revenue?from=2023-01&to=2026-01"));
  });
});

describe("aging", () => {
  let user: TestUser;
  let acme: number;
  let globex: number;

  beforeAll(async () => {
    user = await env.user();
    acme = (await newClient(user, { name: "Acme", currency: "EUR" })).id;
    globex = (await newClient(user, { name: "Globex", currency: "USD" })).id;
    const at = (dueDate: string, clientId: number, unitPrice: string, send = true) =>
      issued(user, clientId, { dueDate, lineItems: [{ description: "x", unitPrice }] }, send);
    // The clock is 2026-11-22T09:30:00Z.
    await at("2026-11-22T09:30:00Z", acme, "1.00"); // 0 days: current
    await at("2026-12-31", acme, "2.00", false); // finalized, not sent: current
    await at("2026-11-21T09:30:00Z", acme, "4.00"); // 1 day
    await at("2026-10-23T09:30:00Z", acme, "8.00"); // 30 days
    await at("2026-10-22T09:29:59Z", acme, "16.00"); // 32 days (31 days and a second, rounded up)
    const partly = await at("2026-09-22T09:30:00Z", acme, "32.00"); // 61 days, 12.00 of it paid
    ok(await user.call("POST", `/invoices/${partly}/payments`, { amount: "12.00", paymentMethod: "cash" }), 201);
    await at("2026-08-01", globex, "64.00"); // > 90 days
    await at("2026-11-30", globex, "128.00"); // current
    const paid = await at("2026-08-01", globex, "1000.00");
    ok(await user.call("POST", `/invoices/${paid}/mark-paid`, { paymentMethod: "cash" }));
    const voided = await at("2026-08-01", globex, "2000.00");
    ok(await user.call("POST", `/invoices/${voided}/void`));
    ok(
      await user.call("POST", "/invoices", {
        clientId: globex,
        lineItems: [{ description: "draft", unitPrice: "4000.00" }],
      }),
      201,
    );
  });

  const row = (o: Record<string, unknown>) => ({
    current: "0.00",
    overdue1to30: "0.00",
    overdue31to60: "0.00",
    overdue61to90: "0.00",
    overdueOver90: "0.00",
    ...o,
  });

  it("buckets the open invoices' amountDue by days past due, per currency and per client", async () => {
    const report = ok(await user.call("GET", "/reports/aging")).body;
    const eur = row({
      current: "3.00",
      overdue1to30: "12.00",
      overdue31to60: "16.00",
      overdue61to90: "20.00",
      total: "51.00",
      invoiceCount: 6,
    });
    const usd = row({ current: "128.00", overdueOver90: "64.00", total: "192.00", invoiceCount: 2 });
    expect(report).toEqual({
      asOf: "2026-11-22T09:30:00.000Z",
      totals: [
        { currency: "EUR", ...eur },
        { currency: "USD", ...usd },
      ],
      clients: [
        { clientId: acme, clientName: "Acme", currency: "EUR", ...eur },
        { clientId: globex, clientName: "Globex", currency: "USD", ...usd },
      ],
    });
  });

  it("ages as of asOf, at once (no stream involved)", async () => {
    // 38.6 and 39.6 days past due for the 1.00 and the 4.00; 68.6 and 69.6 for the 8.00 and 16.00.
    const report = ok(await user.call("GET", "/reports/aging?asOf=2026-12-31T00:00:00Z")).body;
    expect(report.asOf).toBe("2026-12-31T00:00:00.000Z");
    expect(report.totals[0]).toEqual({
      currency: "EUR",
      ...row({
        current: "2.00",

        overdue31to60: "5.00",
        overdue61to90: "24.00",
        overdueOver90: "20.00",
        total: "51.00",
        invoiceCount: 6,
      }),
    });
    // A payment shows at once.
    const open = ok(await user.call("GET", `/invoices?status=sent&clientId=${globex}`)).body as {
      id: number;
      total: string;
    }[];
    const current = open.find((i) => i.total === "128.00")!;
    ok(await user.call("POST", `/invoices/${current.id}/mark-paid`, { paymentMethod: "cash" }));
    const after = ok(await user.call("GET", "/reports/aging")).body;
    expect(after.totals[1]).toEqual({
      currency: "USD",
      ...row({ overdueOver90: "64.00", total: "64.00", invoiceCount: 1 }),
    });
  });
});

describe("the report ledger's version check", () => {
  it("an older record delivered after a newer one (a finalize after its void) changes nothing", async () => {
    const user = await env.user();
    const client = await newClient(user, { currency: "EUR" });
    // 100.00 + 19 % issued (finalized) in October, voided now (November).
    const id = await issued(
      user,
      client.id,
      { issueDate: "2026-10-05", lineItems: [{ description: "x", unitPrice: "100.00", taxRate: "0.19" }] },
      false,
    );
    const read = async () =>
      (
        await env.deps.db.doc.send(
          new GetCommand({ TableName: env.deps.db.table, Key: invoiceKey(user.userId, id), ConsistentRead: true }),
        )
      ).Item!;
    await env.drainStream();
    const finalized = await read(); // the finalize's new image: an older version than the void's
    ok(await user.call("POST", `/invoices/${id}/void`));
    await env.drainStream();
    expect(Number((await read()).version)).toBeGreaterThan(Number(finalized.version));
    const reports = async () => ({
      revenue: ok(await user.call("GET", "/reports/revenue?from=2026-10&to=2026-11")).body,
      tax: ok(await user.call("GET", "/reports/tax?from=2026-10&to=2026-11")).body,
    });
    const before = await reports();
    expect(before.revenue.map((r: { voided: string }) => r.voided)).toEqual(["0.00", "119.00"]);
    // The stream gives the finalize's record again after the void was counted (a retried batch, a
    // second reader), as the subscriber receives it: from the draft's image to the finalized one.
    const draft = { ...finalized, status: "draft", invoiceNumber: null, version: Number(finalized.version) - 1 };
    await countChange(env.deps, "MODIFY", draft, finalized);
    expect(await reports()).toEqual(before);
  });
});

describe("aging at each bucket's edges", () => {
  const DAY = 86_400_000;
  const BUCKETS = ["current", "overdue1to30", "overdue31to60", "overdue61to90", "overdueOver90"] as const;
  /** The one open invoice's bucket as of `asOf`: the only bucket that is not zero. */
  async function bucketAsOf(user: TestUser, asOf: string): Promise<string[]> {
    const report = ok(await user.call("GET", `/reports/aging?asOf=${asOf}`)).body;
    return BUCKETS.filter((b) => report.totals[0][b] !== "0.00");
  }
  async function oneInvoiceDue(dueDate: string): Promise<TestUser> {
    const user = await env.user();
    const client = await newClient(user, { currency: "EUR" });
    await issued(user, client.id, { dueDate, lineItems: [{ description: "x", unitPrice: "1.00" }] });
    return user;
  }
  const plus = (due: string, days: number, seconds = 0) =>
    new Date(Date.parse(due) + days * DAY + seconds * 1000).toISOString();

  it("30/31, 60/61, 90/91 on both sides, due a second before a month's last UTC midnight", async () => {
    // Due 31 January 23:59:59 UTC: each edge's second side is the next UTC day (00:00:00), and the
    // days run across February's 28 (2026), March and April.
    const due = "2026-01-31T23:59:59.000Z";
    const user = await oneInvoiceDue(due);
    const cases: [asOf: string, bucket: string][] = [
      [plus(due, 0), "current"], // 0 days
      [plus(due, 0, 1), "overdue1to30"], // 1 s past due, 1 February 00:00:00: day 1
      [plus(due, 29, 1), "overdue1to30"], // 29 days and a second, rounded up: 30
      [plus(due, 30), "overdue1to30"], // 2 March 23:59:59: 30 days
      [plus(due, 30, 1), "overdue31to60"], // 3 March 00:00:00: 31
      [plus(due, 60), "overdue31to60"], // 1 April 23:59:59: 60
      [plus(due, 60, 1), "overdue61to90"], // 2 April 00:00:00: 61
      [plus(due, 90), "overdue61to90"], // 1 May 23:59:59: 90
      [plus(due, 90, 1), "overdueOver90"], // 2 May 00:00:00: 91
    ];
    expect(cases.map(([asOf]) => asOf).slice(3)).toEqual([
      "2026-03-02T23:59:59.000Z",
      "2026-03-03T00:00:00.000Z",
      "2026-04-01T23:59:59.000Z",
      "2026-04-02T00:00:00.000Z",
      "2026-05-01T23:59:59.000Z",
      "2026-05-02T00:00:00.000Z",
    ]);
    for (const [asOf, bucket] of cases) expect(await bucketAsOf(user, asOf), asOf).toEqual([bucket]);
  });

  it("whole days from a month end at midnight, to other month ends: 30/31, 60/61, 90/91", async () => {
    const due = "2026-02-28T00:00:00.000Z"; // February's last day
    const user = await oneInvoiceDue(due);
    const cases: [asOf: string, bucket: string][] = [
      ["2026-03-30T00:00:00.000Z", "overdue1to30"], // 30 days
      ["2026-03-31T00:00:00.000Z", "overdue31to60"], // 31 (March's last day)
      ["2026-04-29T00:00:00.000Z", "overdue31to60"], // 60
      ["2026-04-30T00:00:00.000Z", "overdue61to90"], // 61 (April's last day)
      ["2026-05-29T00:00:00.000Z", "overdue61to90"], // 90
      ["2026-05-30T00:00:00.000Z", "overdueOver90"], // 91
      ["2026-05-29T00:00:00.001Z", "overdueOver90"], // 90 days and a millisecond, rounded up: 91
    ];
    for (const [asOf, bucket] of cases) expect(await bucketAsOf(user, asOf), asOf).toEqual([bucket]);
  });
});

describe("aging with credit notes", () => {
  it("an open invoice's credit lowers its amount due at once; a wholly credited one leaves", async () => {
    const user = await env.user();
    const client = await newClient(user, { currency: "EUR" });
    const open = await issued(user, client.id, {
      dueDate: "2026-11-01",
      lineItems: [{ description: "x", unitPrice: "100.00" }],
    });
    const gone = await issued(user, client.id, {
      dueDate: "2026-11-01",
      lineItems: [{ description: "y", unitPrice: "7.00" }],
    });
    ok(
      await user.call("POST", `/invoices/${open}/credit-notes`, {
        lineItems: [{ description: "Goodwill", unitPrice: "30.00" }],
      }),
      201,
    );
    ok(await user.call("POST", `/invoices/${gone}/credit-notes`, {}), 201);
    const report = ok(await user.call("GET", "/reports/aging")).body;
    expect(report.totals).toEqual([
      {
        currency: "EUR",
        current: "0.00",
        overdue1to30: "70.00",
        overdue31to60: "0.00",
        overdue61to90: "0.00",
        overdueOver90: "0.00",
        total: "70.00",
        invoiceCount: 1,
      },
    ]);
  });
});

describe("credit notes and voids", () => {
  it("a credit note counts in its month; a void takes off what was not credited, nothing twice", async () => {
    const user = await env.user();
    const client = await newClient(user, { currency: "EUR" });
    // X: 2 × 50.00 at 19 % = 119.00, issued in October; 1 of the 2 credited now (59.50), then voided.
    const x = await issued(user, client.id, {
      issueDate: "2026-10-05",
      lineItems: [{ description: "Design", quantity: "2", unitPrice: "50.00", taxRate: "0.19" }],
    });
    const lineId = ok(await user.call("GET", `/invoices/${x}`)).body.lineItems[0].id;
    const partial = ok(
      await user.call("POST", `/invoices/${x}/credit-notes`, { lineItems: [{ invoiceLineId: lineId, quantity: "1" }] }),
      201,
    ).body;
    expect(partial.total).toBe("59.50");
    ok(await user.call("POST", `/invoices/${x}/void`));
    // Y: 10.00 at 7 % = 10.70, issued in September, wholly credited now: void by its credit note.
    const y = await issued(user, client.id, {
      issueDate: "2026-09-01",
      lineItems: [{ description: "Book", unitPrice: "10.00", taxRate: "0.07" }],
    });
    ok(await user.call("POST", `/invoices/${y}/credit-notes`, {}), 201);
    expect(ok(await user.call("GET", `/invoices/${y}`)).body.status).toBe("void");
    await env.drainStream();

    const revenue = ok(await user.call("GET", "/reports/revenue?from=2026-09&to=2026-11")).body;
    expect(revenue).toEqual([
      { month: "2026-09", currency: "EUR", ...zero, invoiced: "10.70", net: "10.70", ...counts0, invoiceCount: 1 },
      { month: "2026-10", currency: "EUR", ...zero, invoiced: "119.00", net: "119.00", ...counts0, invoiceCount: 1 },
      {
        month: "2026-11",
        currency: "EUR",
        ...zero,
        credited: "70.20",
        voided: "59.50", // X's 119.00 less its 59.50 credited; Y's void follows a full credit: 0
        net: "-129.70",
        ...counts0,
        creditNoteCount: 2,
      },
    ]);
    // Over the three months everything cancels; November alone takes off both issues' tax.
    expect(ok(await user.call("GET", "/reports/tax?from=2026-09&to=2026-11")).body).toEqual([]);
    expect(ok(await user.call("GET", "/reports/tax?from=2026-11&to=2026-11")).body).toEqual([
      { currency: "EUR", taxCategory: "standard", taxRate: "0.19", taxableAmount: "-100.00", taxAmount: "-19.00" },
      { currency: "EUR", taxCategory: "standard", taxRate: "0.07", taxableAmount: "-10.00", taxAmount: "-0.70" },
    ]);
    // Aging: neither is open any more.
    expect(ok(await user.call("GET", "/reports/aging")).body.totals).toEqual([]);
  });
});
