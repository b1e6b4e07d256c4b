import type { EInvoiceModel, Party } from "./model";
import type { Address } from "./source";
import { el, leaf, serialize, type XmlElement } from "./xml";

/**
 * EN 16931 in OASIS UBL 2.1 syntax, for the `ubl` and `xrechnung` formats: an `Invoice` document,
 * or a `CreditNote` document for a credit note (type code 381), whose names differ where UBL's two
 * schemas do (the type code, the lines and their quantity; a credit note has no header due date).
 * Elements follow the UBL 2.1 schemas' order.
 */
const ns = (root: string) => ({
  xmlns: `urn:oasis:names:specification:ubl:schema:xsd:${root}-2`,
  "xmlns:cac": "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2",
  "xmlns:cbc": "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2",
});

const DOCUMENT = {
  "380": {
    root: "Invoice",
    typeCode: "cbc:InvoiceTypeCode",
    line: "cac:InvoiceLine",
    quantity: "cbc:InvoicedQuantity",
  },
  "381": {
    root: "CreditNote",
    typeCode: "cbc:CreditNoteTypeCode",
    line: "cac:CreditNoteLine",
    quantity: "cbc:CreditedQuantity",
  },
} as const;

export function writeUbl(m: EInvoiceModel): string {
  const amount = (name: string, value: string) => leaf(name, value, { currencyID: m.currency });
  const doc = DOCUMENT[m.typeCode];
  const root = el(
    doc.root,
    ns(doc.root),
    leaf("cbc:CustomizationID", m.customizationId),
    leaf("cbc:ProfileID", m.profileId),
    leaf("cbc:ID", m.number),
    leaf("cbc:IssueDate", m.issueDate),
    // UBL's CreditNote has no header due date (it would go in the payment means).
    m.typeCode === "380" ? leaf("cbc:DueDate", m.dueDate) : null,
    leaf(doc.typeCode, m.typeCode),
    leaf("cbc:Note", m.notes),
    leaf("cbc:DocumentCurrencyCode", m.currency),
    leaf("cbc:BuyerReference", m.buyerReference),
    el("cac:OrderReference", {}, leaf("cbc:ID", m.orderReference)),
    m.precedingInvoice &&
      el(
        "cac:BillingReference",
        {},
        el(
          "cac:InvoiceDocumentReference",
          {},
          leaf("cbc:ID", m.precedingInvoice.number),
          leaf("cbc:IssueDate", m.precedingInvoice.issueDate),
        ),
      ),
    el("cac:AccountingSupplierParty", {}, party(m.seller, true)),
    el("cac:AccountingCustomerParty", {}, party(m.buyer, false)),
    el(
      "cac:Delivery",
      {},
      leaf("cbc:ActualDeliveryDate", m.deliveryDate),
      m.deliverTo && el("cac:DeliveryLocation", {}, address("cac:Address", m.deliverTo)),
    ),
    m.paymentMeans.map((p) =>
      el(
        "cac:PaymentMeans",
        {},
        leaf("cbc:PaymentMeansCode", p.code, { name: p.text }),
        leaf("cbc:PaymentID", m.paymentReference),
        p.iban &&
          el(
            "cac:PayeeFinancialAccount",
            {},
            leaf("cbc:ID", p.iban),
            leaf("cbc:Name", p.accountName),
            el("cac:FinancialInstitutionBranch", {}, leaf("cbc:ID", p.bic)),
          ),
      ),
    ),
    el("cac:PaymentTerms", {}, leaf("cbc:Note", m.paymentTerms)),
    el(
      "cac:TaxTotal",
      {},
      amount("cbc:TaxAmount", m.taxTotal),
      m.taxes.map((t) =>
        el(
          "cac:TaxSubtotal",
          {},
          amount("cbc:TaxableAmount", t.taxable),
          amount("cbc:TaxAmount", t.tax),
          el(
            "cac:TaxCategory",
            {},
            leaf("cbc:ID", t.category),
            leaf("cbc:Percent", t.percent),
            leaf("cbc:TaxExemptionReason", t.exemptionReason),
            vatScheme(),
          ),
        ),
      ),
    ),
    el(
      "cac:LegalMonetaryTotal",
      {},
      amount("cbc:LineExtensionAmount", m.lineTotal),
      amount("cbc:TaxExclusiveAmount", m.lineTotal),
      amount("cbc:TaxInclusiveAmount", m.grandTotal),
      amount("cbc:PrepaidAmount", m.paid),
      amount("cbc:PayableAmount", m.due),
    ),
    m.lines.map((line) =>
      el(
        doc.line,
        {},
        leaf("cbc:ID", line.id),
        leaf(doc.quantity, line.quantity, { unitCode: "C62" }),
        amount("cbc:LineExtensionAmount", line.amount),
        el(
          "cac:Item",
          {},
          leaf("cbc:Name", line.name),
          el(
            "cac:ClassifiedTaxCategory",
            {},
            leaf("cbc:ID", line.category),
            leaf("cbc:Percent", line.percent),
            vatScheme(),
          ),
        ),
        el("cac:Price", {}, amount("cbc:PriceAmount", line.price)),
      ),
    ),
  );
  return serialize(root!);
}

const vatScheme = () => el("cac:TaxScheme", {}, leaf("cbc:ID", "VAT"));

function party(p: Party, seller: boolean): XmlElement | null {
  return el(
    "cac:Party",
    {},
    p.electronicAddress && leaf("cbc:EndpointID", p.electronicAddress.id, { schemeID: p.electronicAddress.scheme }),
    el("cac:PartyName", {}, leaf("cbc:Name", p.tradingName)),
    address("cac:PostalAddress", p.address),
    p.vatId && el("cac:PartyTaxScheme", {}, leaf("cbc:CompanyID", p.vatId), vatScheme()),
    // A seller's tax number that is not a VAT identifier is its tax registration identifier (BT-32).
    seller &&
      p.otherTaxId &&
      el("cac:PartyTaxScheme", {}, leaf("cbc:CompanyID", p.otherTaxId), el("cac:TaxScheme", {}, leaf("cbc:ID", "FC"))),
    el(
      "cac:PartyLegalEntity",
      {},
      leaf("cbc:RegistrationName", p.name),
      leaf("cbc:CompanyID", seller ? p.companyId : p.otherTaxId, { schemeID: p.companyIdScheme }),
    ),
    p.contact &&
      el(
        "cac:Contact",
        {},
        leaf("cbc:Name", p.contact.name),
        leaf("cbc:Telephone", p.contact.phone),
        leaf("cbc:ElectronicMail", p.contact.email),
      ),
  );
}

function address(name: string, a: Address): XmlElement | null {
  return el(
    name,
    {},
    leaf("cbc:StreetName", a.line1),
    leaf("cbc:AdditionalStreetName", a.line2),
    leaf("cbc:CityName", a.city),
    leaf("cbc:PostalZone", a.postalCode),
    leaf("cbc:CountrySubentity", a.region),
    el("cac:Country", {}, leaf("cbc:IdentificationCode", a.country)),
  );
}
