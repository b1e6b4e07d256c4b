import type { World } from "./world";

/**
 * Render time of the largest valid invoice (API.md: any valid invoice renders, page or PDF, in
 * under 2 s): 100 lines of 1000-character descriptions without spaces, 5000-character notes and
 * terms, a full seller profile. Each document is requested through the app (the database read
 * included), median of RUNS. A figure, not an assertion.
 */
interface RenderRow {
  document: string;
  medianMs: number;
  bytes: number;
  goal: string;
  meetsGoal: boolean;
}

const RUNS = 5;

export async function measureRender(world: World): Promise<RenderRow[]> {
  const auth = { Authorization: `Bearer ${world.key}`, "Content-Type": "application/json" };
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await world.app.request(`http://localhost${path}`, {
      method,
      headers: auth,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  await call("PATCH", "/profile", {
    businessName: "Northwind Studio",
    legalName: "Northwind Studio GmbH",
    taxId: "DE123456789",
    address: { line1: "Torstraße 1", city: "Berlin", postalCode: "10119", country: "DE" },
    bankAccount: { accountName: "Northwind Studio GmbH", iban: "DE89370400440532013000", bic: "COBADEFFXXX" },
  });
  const client = await call("POST", "/clients", {
    name: "Acme",
    email: "ap@acme.test",
    address: { line1: "1 Main St", country: "US" },
  });
  const invoice = await call("POST", "/invoices", {
    clientId: client.id,
    lineItems: Array.from({ length: 100 }, (_, i) => ({
      description: "W".repeat(995) + String(i).padStart(5, "0"),
      unitPrice: "1.00",
      taxRate: "0.19",
    })),
    notes: "M".repeat(5000),
    terms: "W".repeat(5000),
  });
  const finalized = await call("POST", `/invoices/${invoice.id}/finalize`);
  const rows: RenderRow[] = [];
  for (const [document, path] of [
    ["public page", `/public/invoices/${finalized.publicToken}`],
    ["PDF", `/public/invoices/${finalized.publicToken}/pdf`],
  ] as const) {
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      const res = await world.app.request(`http://localhost${path}`);
      bytes = (await res.arrayBuffer()).byteLength;
      times.push(performance.now() - started);
      if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    }
    times.sort((a, b) => a - b);
    const medianMs = Math.round(times[Math.floor(RUNS / 2)]!);
    rows.push({
      document: `worst-case invoice, ${document}`,
      medianMs,
      bytes,
      goal: "< 2000 ms",
      meetsGoal: medianMs < 2000,
    });
  }
  return rows;
}
