import { centsOf, formatMoney } from "@invoicing/core/money/money";
import { splitPeppolId } from "@invoicing/core/peppol/participant-id";
import type { Address, EInvoiceFormat, EInvoiceSource, TaxCategory } from "./source";

/**
 * The invoice in EN 16931's own terms (business terms BT-n, groups BG-n), built once from the
 * invoice resource; the UBL and CII writers only spell it in their syntax. The mapping table is in
 * docs/e-invoices.md.
 */
const CATEGORY_CODE: Record<TaxCategory, string> = {
  standard: "S",
  zero_rated: "Z",
  exempt: "E",
  reverse_charge: "AE",
  intra_community: "K",
  export: "G",
  outside_scope: "O",
};

/** Categories whose breakdown carries the exemption reason (BT-120); never zero-rated (BR-Z-10). */
const EXEMPT_CATEGORIES: readonly TaxCategory[] = [
  "exempt",
  "reverse_charge",
  "intra_community",
  "export",
  "outside_scope",
];

const EN16931 = "urn:cen.eu:en16931:2017";
const XRECHNUNG = "urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0";
const PEPPOL_BILLING = "urn:fdc:peppol.eu:2017:poacc:billing:01:1.0";
/** Peppol BIS Billing 3.0 (API.md section 19): its specification identifier (PEPPOL-EN16931-R004). */
const PEPPOL_BIS = "urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0";

/** An address an e-invoice can place: EN 16931 needs each party's country (BR-9, BR-11). */
type PlacedAddress = Address & { country: string };
export const isPlaced = (address: Address | null): address is PlacedAddress => !!address?.country;

export interface Party {
  /** BT-27 / BT-44. */
  name: string;
  /** BT-28: the trading name, when it differs from the legal name. */
  tradingName: string | null;
  /** BT-31 / BT-48: a VAT identifier (country prefix); BT-32 / BT-47 otherwise. */
  vatId: string | null;
  otherTaxId: string | null;
  /** BT-30 (seller only). */
  companyId: string | null;
  address: PlacedAddress;
  /** BT-34 / BT-49: the Peppol identifier (its scheme code as schemeID) when set, else the email (EM). */
  electronicAddress: ElectronicAddress | null;
  /** The scheme of BT-30 / BT-47 when a country's rules name one (a Dutch KvK 0106, a Danish CVR 0184). */
  companyIdScheme: string | null;
  contact: { name: string | null; phone: string | null; email: string | null } | null;
}

export interface ElectronicAddress {
  scheme: string;
  id: string;
}

interface ModelLine {
  id: string;
  name: string;
  /** Signed: a discount line has a negative quantity and a positive price (BR-27). */
  quantity: string;
  price: string;
  amount: string;
  category: string;
  /** Percent (BT-152); null for "not subject to VAT" (BR-O-05). */
  percent: string | null;
}

interface ModelTax {
  category: string;
  percent: string;
  taxable: string;
  tax: string;
  exemptionReason: string | null;
}

interface PaymentMeans {
  /** UNTDID 4461: 58 SEPA credit transfer, 68 online payment service. */
  code: "58" | "68";
  text: string | null;
  iban: string | null;
  accountName: string | null;
  bic: string | null;
}

export interface EInvoiceModel {
  customizationId: string;
  profileId: string | null;
  /** BT-3: 380 a commercial invoice, 381 a credit note. */
  typeCode: "380" | "381";
  number: string;
  issueDate: string;
  dueDate: string | null;
  currency: string;
  notes: string | null;
  buyerReference: string | null;
  orderReference: string | null;
  seller: Party;
  buyer: Party;
  /** BG-3, a credit note's: the invoice it corrects (BT-25 number, BT-26 issue date). */
  precedingInvoice: { number: string; issueDate: string } | null;
  deliveryDate: string;
  deliverTo: PlacedAddress | null;
  paymentReference: string;
  paymentMeans: PaymentMeans[];
  paymentTerms: string | null;
  lines: ModelLine[];
  taxes: ModelTax[];
  taxTotal: string;
  lineTotal: string;
  grandTotal: string;
  paid: string;
  due: string;
}

/**
 * A VAT identifier starts with the ISO 3166-1 code of its country (EL for Greece), as BR-CO-9 asks;
 * any other tax number (a German Steuernummer, say) is a tax registration identifier instead.
 */
export function isVatId(taxId: string): boolean {
  const prefix = taxId.slice(0, 2);
  if (!/^[A-Z]{2}$/.test(prefix) || taxId.length < 4) return false;
  return prefix === "EL" || prefix === "XI" || REGION_NAMES.of(prefix) !== prefix;
}
const REGION_NAMES = new Intl.DisplayNames(["en"], { type: "region", fallback: "code" });

/** "0.19" → "19.00", "0.0825" → "8.25", "0.09975" → "9.975": the rate as a percent. */
export function percentOf(taxRate: string): string {
  const [whole = "0", frac = ""] = taxRate.split(".");
  const digits = `${whole}${frac.padEnd(6, "0")}`.replace(/^0+(?=\d)/, ""); // millionths
  const padded = digits.padStart(5, "0");
  const intPart = padded.slice(0, -4).replace(/^0+(?=\d)/, "");
  const fracPart = padded.slice(-4).replace(/0+$/, "").padEnd(2, "0");
  return `${intPart}.${fracPart}`;
}

/** The calendar date (YYYY-MM-DD) of a timestamp or date. */
const dateOf = (value: string): string => value.slice(0, 10);

export function buildModel(source: EInvoiceSource, format: EInvoiceFormat): EInvoiceModel {
  const seller = source.seller!;
  const categories = new Set(source.lineItems.map((l) => l.taxCategory));
  // An invoice not subject to VAT names no VAT identifiers at all (BR-O-02).
  const outsideScope = categories.has("outside_scope");
  const sellerTax = splitTaxId(seller.taxId, outsideScope);
  const buyerTax = splitTaxId(source.clientTaxId, outsideScope);
  const xrechnung = format === "xrechnung";
  const peppol = format === "peppol";
  const sellerName = seller.legalName ?? seller.businessName!;
  const buyerAddress = placed(source.clientAddress, "buyer");
  const contact =
    seller.contactName || seller.phone || seller.email
      ? { name: seller.contactName, phone: seller.phone, email: seller.email }
      : null;
  return {
    customizationId: peppol ? PEPPOL_BIS : xrechnung ? XRECHNUNG : EN16931,
    profileId: xrechnung || peppol ? PEPPOL_BILLING : null,
    typeCode: source.correcting ? "381" : "380",
    number: source.invoiceNumber!,
    issueDate: dateOf(source.issueDate!),
    dueDate: source.dueDate ? dateOf(source.dueDate) : null,
    currency: source.currency,
    notes: source.notes,
    buyerReference: source.buyerReference,
    orderReference: source.purchaseOrderReference,
    seller: {
      name: sellerName,
      tradingName: seller.businessName && seller.businessName !== sellerName ? seller.businessName : null,
      vatId: sellerTax.vatId,
      otherTaxId: sellerTax.otherTaxId,
      companyId: seller.companyId,
      companyIdScheme: peppol ? companyIdScheme(seller.address?.country, seller.companyId) : null,
      address: placed(seller.address, "seller"),
      electronicAddress: electronicAddress(source.sellerPeppolId, seller.email),
      contact,
    },
    buyer: {
      name: source.clientName,
      tradingName: null,
      vatId: buyerTax.vatId,
      otherTaxId: buyerTax.otherTaxId,
      companyId: null,
      // Between two Dutch or two Icelandic parties the buyer's registration names its scheme too.
      companyIdScheme:
        peppol && seller.address?.country === buyerAddress.country && ["NL", "IS"].includes(buyerAddress.country)
          ? companyIdScheme(buyerAddress.country, buyerTax.otherTaxId)
          : null,
      address: buyerAddress,
      electronicAddress: electronicAddress(source.buyerPeppolId, source.clientEmail),
      contact: null,
    },
    precedingInvoice: source.correcting
      ? { number: source.correcting.invoiceNumber, issueDate: dateOf(source.correcting.issueDate) }
      : null,
    deliveryDate: dateOf(source.deliveryDate ?? source.issueDate!),
    // The goods of an intra-community supply go to the buyer's country (BT-80, BR-IC-12).
    deliverTo: categories.has("intra_community") ? buyerAddress : null,
    paymentReference: source.invoiceNumber!,
    paymentMeans: paymentMeans(source, !peppol || onlinePaymentAllowed(seller.address, source.clientAddress)),
    paymentTerms: source.terms,
    lines: source.lineItems.map((line) => {
      const discount = line.unitPrice.startsWith("-");
      return {
        id: String(line.id),
        name: line.description,
        quantity: discount ? `-${line.quantity}` : line.quantity,
        price: discount ? line.unitPrice.slice(1) : line.unitPrice,
        amount: line.amount,
        category: CATEGORY_CODE[line.taxCategory],
        percent: line.taxCategory === "outside_scope" ? null : percentOf(line.taxRate),
      };
    }),
    taxes: source.taxBreakdown.map((entry) => ({
      category: CATEGORY_CODE[entry.taxCategory],
      percent: percentOf(entry.taxRate),
      taxable: entry.taxableAmount,
      tax: entry.taxAmount,
      exemptionReason: EXEMPT_CATEGORIES.includes(entry.taxCategory) ? source.taxExemptionReason : null,
    })),
    taxTotal: source.taxTotal,
    lineTotal: source.subtotal,
    grandTotal: source.total,
    paid: source.amountPaid,
    // BR-CO-16: BT-115 = BT-112 − BT-113. The e-invoice states what was issued; credit notes are
    // documents of their own, so the invoice's `amountDue` (lowered by its credit notes) is not it.
    due: formatMoney(centsOf(source.total) - centsOf(source.amountPaid)),
  };
}

/** The completeness check (requirements.ts) ran first: an address missing here is a programming error. */
function placed(address: Address | null, party: string): PlacedAddress {
  if (!isPlaced(address)) throw new Error(`unchecked e-invoice: the ${party}'s address has no country`);
  return address;
}

function splitTaxId(taxId: string | null, outsideScope: boolean): { vatId: string | null; otherTaxId: string | null } {
  if (!taxId) return { vatId: null, otherTaxId: null };
  if (isVatId(taxId)) return { vatId: outsideScope ? null : taxId, otherTaxId: null };
  return { vatId: null, otherTaxId: taxId };
}

/** The Peppol identifier as an electronic address, else the email (scheme EM), else none. */
function electronicAddress(peppolId: string | null | undefined, email: string | null): ElectronicAddress | null {
  if (peppolId) {
    const { scheme, identifier } = splitPeppolId(peppolId);
    return { scheme, id: identifier };
  }
  return email ? { scheme: "EM", id: email } : null;
}

/**
 * The scheme of a legal registration number where Peppol's country rules require one: a Dutch
 * seller's (or Dutch buyer's, when both are Dutch) is a KvK number (0106, 8 digits) or an OIN
 * (0190, 20 digits) (NL-R-003, NL-R-005); a Danish seller's is its CVR number (0184, DK-R-014);
 * an Icelandic party's its kennitala (0196, IS-R-002, IS-R-004). The completeness check
 * (peppol-rules.ts) makes sure the number has that shape.
 */
export function companyIdScheme(country: string | null | undefined, companyId: string | null): string | null {
  if (!companyId) return null;
  if (country === "NL") return /^\d{20}$/.test(companyId) ? "0190" : "0106";
  if (country === "DK") return "0184";
  if (country === "IS") return "0196";
  return null;
}

/**
 * Peppol's Danish rules allow no online-payment code (68) for a Danish seller (DK-R-005), nor its
 * Dutch rules between two Dutch parties (NL-R-008): their pay link stays on the invoice's page.
 */
function onlinePaymentAllowed(seller: Address | null, buyer: Address | null): boolean {
  if (seller?.country === "DK") return false;
  return !(seller?.country === "NL" && buyer?.country === "NL");
}

function paymentMeans(source: EInvoiceSource, online: boolean): PaymentMeans[] {
  const out: PaymentMeans[] = [];
  const bank = source.seller?.bankAccount;
  if (bank) {
    out.push({
      code: "58",
      text: "SEPA credit transfer",
      iban: bank.iban,
      accountName: bank.accountName,
      bic: bank.bic,
    });
  }
  if (source.payLink && online) {
    out.push({ code: "68", text: `Pay online: ${source.payLink}`, iban: null, accountName: null, bic: null });
  }
  return out;
}
