import { buildLineItems, computeTotals, taxBreakdown } from "@invoicing/core/documents/line-items";
import type { CreditNote } from "@invoicing/core/credit-notes/resource";
import { centsOf, formatMoney } from "@invoicing/core/money/money";
import { type CreditedInvoice, creditNoteSourceOf } from "@invoicing/functions/einvoice/credit-note";
import { FRENCH_CLIENT } from "../support/documents";
import type { EInvoiceSource, Seller, SourceLine, TaxCategory } from "@invoicing/functions/einvoice/source";

/**
 * The e-invoice test set: invoices as the API returns them (money as strings, the seller snapshot
 * and the client's copies), each complete for every format, covering the cases the official
 * validators care about. Lines, totals and the tax breakdown are built by the service's own code
 * (core/src/documents/line-items.ts), so each invoice is one the API could return; the official
 * validators, not these fixtures, are the check on the arithmetic.
 */
type LineSpec = [description: string, quantity: string, unitPrice: string, taxRate: string, category?: TaxCategory];

export const SELLER: Seller = {
  businessName: "Muster Design",
  legalName: "Muster Design GmbH",
  address: {
    line1: "Hauptstraße 1",
    line2: "2. OG",
    city: "Berlin",
    postalCode: "10115",
    region: "Berlin",
    country: "DE",
  },
  taxId: "DE123456789",
  companyId: "HRB 12345 B",
  contactName: "Erika Mustermann",
  email: "rechnung@muster-design.de",
  phone: "+49 30 1234567",
  website: "https://muster-design.de",
  bankAccount: { accountName: "Muster Design GmbH", iban: "DE89370400440532013000", bic: "COBADEFFXXX" },
  footer: "Geschäftsführerin: Erika Mustermann",
};

/** The lines as the API stores and returns them: built by the service's own code from the specs. */
export const lines = (specs: LineSpec[]): SourceLine[] =>
  buildLineItems(
    specs.map(([description, quantity, unitPrice, taxRate, taxCategory]) => ({
      description,
      quantity,
      unitPrice,
      taxRate,
      taxCategory,
    })),
    1,
  );

type Over = Partial<Omit<EInvoiceSource, "lineItems">> & { lines: LineSpec[]; paid?: "none" | "part" | "all" };

export function invoice(over: Over): EInvoiceSource {
  const { lines: specs, paid = "none", ...rest } = over;
  const items = lines(specs);
  const totals = computeTotals(items);
  const total = centsOf(totals.total);
  const amountPaid = paid === "all" ? total : paid === "part" ? total / 3n : 0n;
  return {
    invoiceNumber: "INV-000001",
    status: paid === "all" ? "paid" : "sent",
    currency: "EUR",
    issueDate: "2026-11-02T09:30:00.000Z",
    dueDate: "2026-12-02T09:30:00.000Z",
    deliveryDate: null,
    notes: "Vielen Dank für Ihren Auftrag.",
    terms: "Zahlbar innerhalb von 30 Tagen ohne Abzug.",
    buyerReference: "04011000-12345-34",
    purchaseOrderReference: "PO-2026-117",
    taxExemptionReason: null,
    ...totals,
    amountPaid: formatMoney(amountPaid),
    clientName: "Beispiel AG",
    clientEmail: "einkauf@beispiel.de",
    clientAddress: {
      line1: "Marktplatz 5",
      line2: null,
      city: "München",
      postalCode: "80331",
      region: null,
      country: "DE",
    },
    clientTaxId: "DE987654321",
    seller: SELLER,
    lineItems: items,
    taxBreakdown: taxBreakdown(items),
    payLink: null,
    ...rest,
  };
}

const longText = (unit: string, n: number) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);

/** The set: name → invoice. Every one must pass every format's official validation. */
export const CASES: Record<string, EInvoiceSource> = {
  "single-rate": invoice({
    lines: [
      ["Webdesign", "10", "95.00", "0.19"],
      ["Hosting", "12", "9.99", "0.19"],
    ],
  }),
  "mixed-rates": invoice({
    invoiceNumber: "INV-000002",
    lines: [
      ["Beratung", "3", "19.99", "0.19"],
      ["Fachbuch", "2", "24.95", "0.07"],
      ["Service charge", "1", "10.00", "0.09975"],
      ["Porto", "1", "4.90", "0"],
    ],
  }),
  "zero-rated": invoice({ invoiceNumber: "INV-000003", lines: [["Children's books", "40", "7.50", "0"]] }),
  exempt: invoice({
    invoiceNumber: "INV-000004",
    taxExemptionReason: "Steuerfrei nach § 4 Nr. 21 UStG",
    lines: [
      ["Schulungskurs", "1", "1200.00", "0", "exempt"],
      ["Kursmaterial", "5", "20.00", "0.19"],
    ],
  }),
  "reverse-charge": invoice({
    invoiceNumber: "INV-000005",
    taxExemptionReason: "Reverse charge: VAT liability of the recipient (Art. 196 VAT Directive)",
    clientName: "Exemple SARL",
    clientAddress: { ...FRENCH_CLIENT.address, line2: null, region: null },
    clientTaxId: FRENCH_CLIENT.taxId,
    lines: [["Software development", "80", "110.00", "0", "reverse_charge"]],
  }),
  "intra-community": invoice({
    invoiceNumber: "INV-000006",
    taxExemptionReason: "Intra-community supply, exempt under Art. 138 VAT Directive",
    deliveryDate: "2026-10-28",
    clientName: "Muster Handel GmbH",
    clientAddress: {
      line1: "Ringstraße 3",
      line2: null,
      city: "Wien",
      postalCode: "1010",
      region: null,
      country: "AT",
    },
    clientTaxId: "ATU12345678",
    lines: [["Printed brochures", "5000", "0.42", "0", "intra_community"]],
  }),
  export: invoice({
    invoiceNumber: "INV-000007",
    currency: "USD",
    taxExemptionReason: "Export outside the EU, exempt under § 4 Nr. 1a UStG",
    clientName: "Example Inc.",
    clientAddress: {
      line1: "1 Main St",
      line2: "Suite 100",
      city: "Springfield",
      postalCode: "62701",
      region: "IL",
      country: "US",
    },
    clientTaxId: null,
    lines: [["Industrial lamp", "12", "310.00", "0", "export"]],
  }),
  "outside-scope": invoice({
    invoiceNumber: "INV-000008",
    taxExemptionReason: "Not subject to VAT: compensation for damages",
    lines: [["Schadensersatz", "1", "850.00", "0", "outside_scope"]],
  }),
  "discount-lines": invoice({
    invoiceNumber: "INV-000009",
    lines: [
      ["Logo design", "1", "800.00", "0.19"],
      ["Loyalty discount", "1", "-80.00", "0.19"],
      ["Sample prints", "10", "3.00", "0.07"],
      ["Discount on prints", "2", "-1.50", "0.07"],
    ],
  }),
  "hundred-lines": invoice({
    invoiceNumber: "INV-000010",
    lines: Array.from(
      { length: 100 },
      (_, i): LineSpec => [
        `Position ${i + 1}: Arbeitsstunde`,
        `${(i % 7) + 1}.${String(i % 100).padStart(2, "0")}`,
        `${19 + (i % 13)}.${String((i * 37) % 100).padStart(2, "0")}`,
        i % 3 === 0 ? "0.07" : "0.19",
      ],
    ),
  }),
  "partly-paid": invoice({
    invoiceNumber: "INV-000011",
    paid: "part",
    lines: [["Wartungsvertrag Q4", "1", "1500.00", "0.19"]],
  }),
  paid: invoice({ invoiceNumber: "INV-000012", paid: "all", lines: [["Fotoshooting", "1", "650.00", "0.19"]] }),
  void: invoice({
    invoiceNumber: "INV-000013",
    status: "void",
    lines: [["Storniertes Projekt", "1", "300.00", "0.19"]],
  }),
  "non-eur-card-only": invoice({
    invoiceNumber: "INV-000014",
    currency: "GBP",
    seller: {
      ...SELLER,
      legalName: null,
      businessName: "Pounds & Pence Ltd",
      address: { line1: "1 High St", line2: null, city: "London", postalCode: "EC1A 1BB", region: null, country: "GB" },
      taxId: "GB123456789",
      companyId: null,
      bankAccount: null,
    },
    payLink: "https://pay.example.test/public/invoices/tok_abc/pay?x=1&y=2",
    lines: [["Consulting day", "2", "650.00", "0.20"]],
  }),
  "special-text": invoice({
    invoiceNumber: "INV-000015",
    notes: `Notes with <tags> & "quotes" & 'apostrophes' ✓ 😀 — ${longText("Lorem ipsum <b>&amp; ", 4900)}`,
    terms: "Zahlbar in 14 Tagen.\n#SKONTO#TAGE=7#PROZENT=2.00#\n",
    buyerReference: 'Ref <A&B> "x"',
    purchaseOrderReference: "PO & <1>",
    clientName: 'O\'Brien & Söhne <GmbH> "Ü" 🚀',
    seller: { ...SELLER, businessName: "Müller & Co <Design>", legalName: 'Müller & Co "Design" GmbH' },
    lines: [
      [`Emoji 😀 & <escape> "test" ${longText("x&<>", 960)}`, "1", "100.00", "0.19"],
      ["Tab\tand CR\r\nline", "2", "5.00", "0.19"],
    ],
  }),
  "seller-tax-number": invoice({
    invoiceNumber: "INV-000016",
    seller: { ...SELLER, taxId: "30/123/45678" },
    clientTaxId: null,
    lines: [["Texterstellung", "4", "75.00", "0.19"]],
  }),
};

/**
 * Credit notes, until the API issues them in these tests: made from an invoice of the set as the
 * API would (section 17): a credited line keeps the invoice line's description, price, rate and
 * category; amounts, totals and breakdown by the service's own code; what the credit takes off the
 * invoice's amount due, and the rest to refund.
 */
type CreditSpec = {
  creditNoteNumber: string;
  /** [index of the invoice's line, quantity (default: all of it)]; absent: every line, whole. */
  credit?: [line: number, quantity?: string][];
  free?: LineSpec[];
  reason?: CreditNote["reason"];
  memo?: string | null;
};

export function creditNote(
  inv: EInvoiceSource,
  spec: CreditSpec,
): { creditNote: CreditNote; invoice: CreditedInvoice } {
  const credited = (spec.credit ?? inv.lineItems.map((_, i): [number] => [i])).map(([index, quantity]) => {
    const line = inv.lineItems[index]!;
    return { line, quantity: quantity ?? line.quantity };
  });
  const inputs = [
    ...credited.map(({ line, quantity }) => ({
      description: line.description,
      quantity,
      unitPrice: line.unitPrice,
      taxRate: line.taxRate,
      taxCategory: line.taxCategory,
    })),
    ...(spec.free ?? []).map(([description, quantity, unitPrice, taxRate, taxCategory]) => ({
      description,
      quantity,
      unitPrice,
      taxRate,
      taxCategory,
    })),
  ];
  const built = buildLineItems(inputs, 1).map((line, i) => ({ ...line, invoiceLineId: credited[i]?.line.id ?? null }));
  const totals = computeTotals(built);
  const total = centsOf(totals.total);
  // The set's invoices have no earlier credit notes: what is due is the total less what was paid.
  const due = centsOf(inv.total) - centsOf(inv.amountPaid);
  const applied = total < due ? total : due;
  return {
    creditNote: {
      id: 1,
      invoiceId: 1,
      invoiceNumber: inv.invoiceNumber!,
      creditNoteNumber: spec.creditNoteNumber,
      status: "issued",
      reason: spec.reason ?? null,
      memo: spec.memo ?? null,
      currency: inv.currency,
      issueDate: "2026-11-20T14:00:00.000Z",
      lineItems: built,
      ...totals,
      taxBreakdown: taxBreakdown(built),
      taxExemptionReason: inv.taxExemptionReason,
      amountAppliedToDue: formatMoney(applied),
      amountToRefund: formatMoney(total - applied),
      clientId: 1,
      clientName: inv.clientName,
      clientEmail: inv.clientEmail,
      clientAddress: inv.clientAddress,
      clientTaxId: inv.clientTaxId,
      seller: inv.seller,
      publicToken: "cn_public_token_0123456789abcdef",
      sentAt: null,
      peppolDelivery: null,
      createdAt: "2026-11-20T14:00:00.000Z",
    },
    invoice: {
      issueDate: inv.issueDate,
      deliveryDate: inv.deliveryDate,
      buyerReference: inv.buyerReference,
      purchaseOrderReference: inv.purchaseOrderReference,
    },
  };
}

const cn = (inv: string, spec: CreditSpec) => {
  const made = creditNote(CASES[inv]!, spec);
  return creditNoteSourceOf(made.creditNote, made.invoice);
};

/**
 * Credit notes of every tax category the invoices cover (S, Z, E, AE, K, G, O), whole and partial,
 * with a credited discount line, a free goodwill line, refunds of a paid and a partly paid invoice,
 * and special text. Every one must pass every format's official validation.
 */
export const CREDIT_NOTE_CASES: Record<string, EInvoiceSource> = {
  "cn-single-rate-full": cn("single-rate", { creditNoteNumber: "CN-000001", reason: "duplicate" }),
  "cn-mixed-rates-partial": cn("mixed-rates", {
    creditNoteNumber: "CN-000002",
    reason: "order_change",
    memo: "One book was returned.",
    credit: [
      [1, "1"],
      [2, "1"],
    ],
  }),
  "cn-zero-rated": cn("zero-rated", { creditNoteNumber: "CN-000003", credit: [[0, "10"]], reason: "order_change" }),
  "cn-exempt": cn("exempt", { creditNoteNumber: "CN-000004", reason: "product_unsatisfactory" }),
  "cn-reverse-charge": cn("reverse-charge", { creditNoteNumber: "CN-000005", credit: [[0, "8"]] }),
  "cn-intra-community": cn("intra-community", { creditNoteNumber: "CN-000006", credit: [[0, "500"]] }),
  "cn-export": cn("export", { creditNoteNumber: "CN-000007", reason: "other", memo: "Two lamps arrived broken." }),
  "cn-outside-scope": cn("outside-scope", { creditNoteNumber: "CN-000008", reason: "duplicate" }),
  "cn-discount-lines": cn("discount-lines", { creditNoteNumber: "CN-000009", credit: [[0], [1], [3]] }),
  "cn-goodwill-free-line": cn("single-rate", {
    creditNoteNumber: "CN-000010",
    credit: [],
    free: [["Goodwill credit for the late delivery", "1", "50.00", "0.19"]],
    reason: "other",
  }),
  "cn-partly-paid-refund": cn("partly-paid", { creditNoteNumber: "CN-000011", reason: "order_change" }),
  "cn-paid-refund": cn("paid", { creditNoteNumber: "CN-000012", reason: "product_unsatisfactory" }),
  "cn-special-text": cn("special-text", {
    creditNoteNumber: "CN-000013",
    memo: 'Memo with <tags> & "quotes" 😀\nand a second line',
    reason: "other",
    credit: [[1, "1"]],
  }),
  "cn-seller-tax-number": cn("seller-tax-number", { creditNoteNumber: "CN-000014", credit: [[0, "1"]] }),
};
