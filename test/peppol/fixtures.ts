import type { Address, EInvoiceSource, Seller } from "@invoicing/functions/einvoice/source";
import { CASES, CREDIT_NOTE_CASES, SELLER, creditNote, invoice } from "../einvoice/fixtures";
import { creditNoteSourceOf } from "@invoicing/functions/einvoice/credit-note";

/**
 * The Peppol BIS Billing 3.0 test set: the e-invoice set (German sellers: every tax category,
 * discounts, 100 lines, credit notes of each) with both parties' Peppol identifiers, and twenty
 * more invoices and credit notes from sellers of the countries whose Peppol rules differ (Belgium,
 * the Netherlands, France, Sweden, Norway, Denmark, Italy, Austria, Ireland) to buyers at home and
 * abroad. Every one must pass the EN 16931 and the PEPPOL-EN16931 UBL rules with no error.
 */
const address = (line1: string, city: string, postalCode: string, country: string): Address => ({
  line1,
  line2: null,
  city,
  postalCode,
  region: null,
  country,
});

const seller = (over: Partial<Seller>): Seller => ({
  ...SELLER,
  legalName: null,
  website: null,
  footer: null,
  ...over,
});

const BELGIAN = seller({
  businessName: "Atelier Bruxelles SRL",
  address: address("Rue Neuve 12", "Bruxelles", "1000", "BE"),
  taxId: "BE0123456749",
  companyId: "0123456749",
  contactName: "Claire Dubois",
  email: "factures@atelier.be",
  phone: "+32 2 555 01 01",
  bankAccount: { accountName: "Atelier Bruxelles SRL", iban: "BE68539007547034", bic: "GEBABEBB" },
});
const DUTCH = seller({
  businessName: "Studio Amsterdam BV",
  address: address("Damrak 1", "Amsterdam", "1012 LG", "NL"),
  taxId: "NL123456789B01",
  companyId: "12345678",
  contactName: "Jan de Vries",
  email: "facturen@studio.nl",
  phone: "+31 20 555 0101",
  bankAccount: { accountName: "Studio Amsterdam BV", iban: "NL91ABNA0417164300", bic: "ABNANL2A" },
});
const FRENCH = seller({
  businessName: "Conseil Paris SAS",
  address: address("12 rue de la Paix", "Paris", "75002", "FR"),
  taxId: "FR40303265045",
  companyId: "30326504500012",
  contactName: "Marie Martin",
  email: "compta@conseil.fr",
  phone: "+33 1 55 55 01 01",
  bankAccount: { accountName: "Conseil Paris SAS", iban: "FR1420041010050500013M02606", bic: "PSSTFRPPXXX" },
});
const SWEDISH = seller({
  businessName: "Design Stockholm AB",
  address: address("Drottninggatan 1", "Stockholm", "111 51", "SE"),
  taxId: "SE556036079301",
  companyId: "5560360793",
  contactName: "Anna Svensson",
  email: "faktura@design.se",
  phone: "+46 8 555 010 10",
  bankAccount: { accountName: "Design Stockholm AB", iban: "SE4550000000058398257466", bic: "ESSESESS" },
});
const NORWEGIAN = seller({
  businessName: "Fjord Konsult AS",
  address: address("Karl Johans gate 1", "Oslo", "0154", "NO"),
  taxId: "NO987654325MVA",
  companyId: "987654325",
  contactName: "Ola Nordmann",
  email: "faktura@fjord.no",
  phone: "+47 22 55 01 01",
  bankAccount: { accountName: "Fjord Konsult AS", iban: "NO9386011117947", bic: "DNBANOKK" },
});
const DANISH = seller({
  businessName: "Kontor København ApS",
  address: address("Strøget 1", "København", "1160", "DK"),
  taxId: "DK12345678",
  companyId: "12345678",
  contactName: "Mette Hansen",
  email: "faktura@kontor.dk",
  phone: "+45 33 55 01 01",
  bankAccount: { accountName: "Kontor København ApS", iban: "DK5000400440116243", bic: "DABADKKK" },
});
const ITALIAN = seller({
  businessName: "Studio Milano Srl",
  address: address("Via Roma 1", "Milano", "20121", "IT"),
  taxId: "IT12345678903",
  companyId: null,
  contactName: "Giulia Rossi",
  email: "fatture@studio.it",
  phone: "+39 02 5550 1010",
  bankAccount: { accountName: "Studio Milano Srl", iban: "IT60X0542811101000000123456", bic: "BPMOIT22" },
});
const AUSTRIAN = seller({
  businessName: "Werkstatt Wien GmbH",
  address: address("Ringstraße 3", "Wien", "1010", "AT"),
  taxId: "ATU12345678",
  companyId: "FN 123456a",
  contactName: "Lukas Huber",
  email: "rechnung@werkstatt.at",
  phone: "+43 1 555 0101",
  bankAccount: { accountName: "Werkstatt Wien GmbH", iban: "AT611904300234573201", bic: "BKAUATWW" },
});
const IRISH = seller({
  businessName: "Dublin Digital Ltd",
  address: address("1 Grafton Street", "Dublin", "D02 XY45", "IE"),
  taxId: "IE6388047V",
  companyId: "123456",
  contactName: "Seán Murphy",
  email: "accounts@dublindigital.ie",
  phone: "+353 1 555 0101",
  bankAccount: { accountName: "Dublin Digital Ltd", iban: "IE29AIBK93115212345678", bic: "AIBKIE2D" },
});

type Over = Parameters<typeof invoice>[0];
const peppolInvoice = (over: Over): EInvoiceSource => invoice({ notes: null, ...over });

/** Twenty invoices and credit notes beyond the German set: other sellers, foreign buyers. */
const ABROAD: Record<string, EInvoiceSource> = {
  "be-standard": peppolInvoice({
    invoiceNumber: "INV-000101",
    seller: BELGIAN,
    sellerPeppolId: "0208:0123456749",
    buyerReference: null,
    purchaseOrderReference: "PO-BE-7",
    clientName: "Brasserie Namur SA",
    clientAddress: address("Place d'Armes 1", "Namur", "5000", "BE"),
    clientTaxId: "BE0999999823",
    buyerPeppolId: "0208:0999999823",
    lines: [
      ["Webdesign", "12", "85.00", "0.21"],
      ["Drukwerk", "500", "0.35", "0.06"],
    ],
  }),
  "be-nl-intra-community": peppolInvoice({
    invoiceNumber: "INV-000102",
    seller: BELGIAN,
    sellerPeppolId: "9925:BE0123456749",
    taxExemptionReason: "Intra-community supply, Art. 138 VAT Directive",
    deliveryDate: "2026-10-30",
    clientName: "Handel Utrecht BV",
    clientAddress: address("Oudegracht 10", "Utrecht", "3511 AB", "NL"),
    clientTaxId: "NL987654321B01",
    buyerPeppolId: "9944:NL987654321B01",
    lines: [["Office chairs", "40", "129.50", "0", "intra_community"]],
  }),
  "be-outside-scope": peppolInvoice({
    invoiceNumber: "INV-000103",
    seller: BELGIAN,
    sellerPeppolId: "0208:0123456749",
    taxExemptionReason: "Not subject to VAT: compensation for damages",
    clientName: "Assurances Liège SA",
    clientAddress: address("Rue Léopold 5", "Liège", "4000", "BE"),
    clientTaxId: null,
    buyerPeppolId: "0088:5790000435975",
    lines: [["Indemnité", "1", "1250.00", "0", "outside_scope"]],
  }),
  "nl-nl-standard": peppolInvoice({
    invoiceNumber: "INV-000104",
    seller: DUTCH,
    sellerPeppolId: "0106:12345678",
    clientName: "Bakkerij Rotterdam BV",
    clientAddress: address("Coolsingel 40", "Rotterdam", "3011 AD", "NL"),
    clientTaxId: "87654321",
    buyerPeppolId: "0106:87654321",
    payLink: "https://pay.example.test/i/nl",
    lines: [
      ["Branding", "1", "2400.00", "0.21"],
      ["Boeken", "3", "29.95", "0.09"],
      ["Korting", "1", "-100.00", "0.21"],
    ],
  }),
  "nl-be-many-lines": peppolInvoice({
    invoiceNumber: "INV-000105",
    seller: DUTCH,
    sellerPeppolId: "9944:NL123456789B01",
    clientName: "Brasserie Namur SA",
    clientAddress: address("Place d'Armes 1", "Namur", "5000", "BE"),
    clientTaxId: "BE0999999823",
    buyerPeppolId: "0208:0999999823",
    lines: Array.from({ length: 60 }, (_, i): [string, string, string, string] => [
      `Uur ${i + 1}`,
      `${(i % 5) + 1}.25`,
      i % 10 === 9 ? "-12.50" : `${40 + (i % 9)}.${String((i * 13) % 100).padStart(2, "0")}`,
      i % 4 === 0 ? "0.09" : "0.21",
    ]),
  }),
  "fr-de-reverse-charge": peppolInvoice({
    invoiceNumber: "INV-000106",
    seller: FRENCH,
    sellerPeppolId: "0009:30326504500012",
    taxExemptionReason: "Autoliquidation (Art. 196 Directive TVA)",
    clientName: "Beispiel AG",
    clientTaxId: "DE987654321",
    buyerPeppolId: "9930:DE987654321",
    lines: [["Conseil stratégique", "6", "950.00", "0", "reverse_charge"]],
  }),
  "fr-exempt-zero": peppolInvoice({
    invoiceNumber: "INV-000107",
    seller: FRENCH,
    sellerPeppolId: "9957:FR40303265045",
    taxExemptionReason: "Exonération de TVA, article 261-4-4° du CGI",
    clientName: "Acme SARL",
    clientAddress: address("3 avenue Foch", "Lyon", "69006", "FR"),
    clientTaxId: "FR40303265045",
    buyerPeppolId: "0009:73282932000074",
    lines: [
      ["Formation", "2", "700.00", "0", "exempt"],
      ["Livres", "10", "18.00", "0.055"],
      ["Transport", "1", "40.00", "0.20"],
    ],
  }),
  "se-standard": peppolInvoice({
    invoiceNumber: "INV-000108",
    currency: "SEK",
    seller: SWEDISH,
    sellerPeppolId: "0007:5560360793",
    clientName: "Kund Göteborg AB",
    clientAddress: address("Avenyn 1", "Göteborg", "411 36", "SE"),
    clientTaxId: "SE556036079301",
    buyerPeppolId: "0007:5560360793",
    lines: [
      ["Design", "10", "1150.00", "0.25"],
      ["Livsmedel", "4", "89.00", "0.12"],
      ["Böcker", "3", "249.00", "0.06"],
    ],
  }),
  "no-standard": peppolInvoice({
    invoiceNumber: "INV-000109",
    currency: "NOK",
    seller: NORWEGIAN,
    sellerPeppolId: "0192:987654325",
    clientName: "Kunde Bergen AS",
    clientAddress: address("Bryggen 1", "Bergen", "5003", "NO"),
    clientTaxId: null,
    buyerPeppolId: "0192:987654325",
    lines: [["Rådgivning", "15", "1400.00", "0.25"]],
  }),
  "dk-standard-card": peppolInvoice({
    invoiceNumber: "INV-000110",
    currency: "DKK",
    seller: DANISH,
    sellerPeppolId: "0184:12345678",
    payLink: "https://pay.example.test/i/dk",
    clientName: "Kunde Aarhus A/S",
    clientAddress: address("Strøget 2", "Aarhus", "8000", "DK"),
    clientTaxId: "DK87654321",
    buyerPeppolId: "0184:87654321",
    lines: [["Konsulentbistand", "7.5", "950.00", "0.25"]],
  }),
  "it-exempt": peppolInvoice({
    invoiceNumber: "INV-000111",
    seller: ITALIAN,
    sellerPeppolId: "0088:4000001000005",
    taxExemptionReason: "Esente art. 10 DPR 633/72",
    clientName: "Cliente Torino SpA",
    clientAddress: address("Via Po 1", "Torino", "10124", "IT"),
    clientTaxId: "IT98765432106",
    buyerPeppolId: "0088:5790000435975",
    lines: [
      ["Corso di formazione", "1", "1800.00", "0", "exempt"],
      ["Materiale", "20", "12.50", "0.22"],
    ],
  }),
  "at-ch-export": peppolInvoice({
    invoiceNumber: "INV-000112",
    currency: "CHF",
    seller: AUSTRIAN,
    sellerPeppolId: "9914:ATU12345678",
    taxExemptionReason: "Ausfuhrlieferung, steuerfrei nach § 7 UStG",
    clientName: "Kunde Zürich AG",
    clientAddress: address("Bahnhofstrasse 1", "Zürich", "8001", "CH"),
    clientTaxId: null,
    buyerPeppolId: "0183:CHE123456789",
    lines: [
      ["Maschinenteil", "3", "2450.00", "0", "export"],
      ["Mengenrabatt", "1", "-245.00", "0", "export"],
    ],
  }),
  "ie-us-export": peppolInvoice({
    invoiceNumber: "INV-000113",
    currency: "USD",
    seller: IRISH,
    sellerPeppolId: "9935:IE6388047V",
    taxExemptionReason: "Export of goods outside the EU",
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
    buyerPeppolId: "0060:123456789",
    lines: [
      ["Software licence", "25", "99.00", "0", "export"],
      ["Volume discount", "1", "-247.50", "0", "export"],
    ],
  }),
};

/** Credit notes of the invoices above, as the API makes them (test/einvoice/fixtures.ts). */
const cnOf = (name: string, spec: Parameters<typeof creditNote>[1]): EInvoiceSource => {
  const inv = ABROAD[name]!;
  const made = creditNote(inv, spec);
  return {
    ...creditNoteSourceOf(made.creditNote, made.invoice),
    sellerPeppolId: inv.sellerPeppolId,
    buyerPeppolId: inv.buyerPeppolId,
  };
};

const ABROAD_CREDIT_NOTES: Record<string, EInvoiceSource> = {
  "cn-be-standard-partial": cnOf("be-standard", {
    creditNoteNumber: "CN-000101",
    credit: [[1, "100"]],
    reason: "order_change",
  }),
  "cn-be-nl-intra-community": cnOf("be-nl-intra-community", { creditNoteNumber: "CN-000102", credit: [[0, "4"]] }),
  "cn-nl-nl-discount": cnOf("nl-nl-standard", { creditNoteNumber: "CN-000103", credit: [[0], [2]], reason: "other" }),
  "cn-fr-reverse-charge": cnOf("fr-de-reverse-charge", { creditNoteNumber: "CN-000104", reason: "duplicate" }),
  "cn-se-goodwill": cnOf("se-standard", {
    creditNoteNumber: "CN-000105",
    credit: [],
    free: [["Goodwill", "1", "500.00", "0.25"]],
    memo: "Försenad leverans",
  }),
  "cn-no-full": cnOf("no-standard", { creditNoteNumber: "CN-000106", reason: "duplicate" }),
  "cn-dk-partial": cnOf("dk-standard-card", { creditNoteNumber: "CN-000107", credit: [[0, "2.5"]] }),
  "cn-at-ch-export": cnOf("at-ch-export", {
    creditNoteNumber: "CN-000108",
    credit: [[0, "1"]],
    reason: "product_unsatisfactory",
  }),
};

/** German parties' identifiers for the e-invoice set, by the buyer's country. */
const BUYER_IDS: Record<string, string> = {
  DE: "9930:DE987654321",
  FR: "9957:FR40303265045",
  AT: "9914:ATU12345678",
  US: "0060:123456789",
};

const withIds = (cases: Record<string, EInvoiceSource>) =>
  Object.fromEntries(
    Object.entries(cases).map(([name, source]) => [
      name,
      {
        ...source,
        sellerPeppolId: source.seller?.address?.country === "GB" ? "9932:GB123456789" : "9930:DE123456789",
        buyerPeppolId: BUYER_IDS[source.clientAddress?.country ?? "DE"] ?? "0088:5790000435975",
      },
    ]),
  );

export const GERMAN_CASES: Record<string, EInvoiceSource> = { ...withIds(CASES), ...withIds(CREDIT_NOTE_CASES) };
export const ABROAD_CASES: Record<string, EInvoiceSource> = { ...ABROAD, ...ABROAD_CREDIT_NOTES };
export const PEPPOL_CASES: Record<string, EInvoiceSource> = { ...GERMAN_CASES, ...ABROAD_CASES };
