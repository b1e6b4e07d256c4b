import type { EInvoiceModel, Party } from "./model";
import type { Address } from "./source";
import { el, leaf, serialize, type XmlElement } from "./xml";

/**
 * EN 16931 in UN/CEFACT Cross Industry Invoice (D16B) syntax, for the `cii` format and the
 * `factur-x.xml` inside Factur-X; a credit note is the same document with TypeCode 381 and the
 * invoice it corrects (BG-3). Elements follow the D16B schema's order.
 */
const NS = {
  "xmlns:rsm": "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100",
  "xmlns:ram": "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100",
  "xmlns:udt": "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100",
  "xmlns:qdt": "urn:un:unece:uncefact:data:standard:QualifiedDataType:100",
};

/** CII dates are YYYYMMDD with format code 102. */
const date = (name: string, value: string | null) =>
  value ? el(name, {}, leaf("udt:DateTimeString", value.replace(/-/g, ""), { format: "102" })) : null;

export function writeCii(m: EInvoiceModel): string {
  const root = el(
    "rsm:CrossIndustryInvoice",
    NS,
    el(
      "rsm:ExchangedDocumentContext",
      {},
      el("ram:BusinessProcessSpecifiedDocumentContextParameter", {}, leaf("ram:ID", m.profileId)),
      el("ram:GuidelineSpecifiedDocumentContextParameter", {}, leaf("ram:ID", m.customizationId)),
    ),
    el(
      "rsm:ExchangedDocument",
      {},
      leaf("ram:ID", m.number),
      leaf("ram:TypeCode", m.typeCode),
      date("ram:IssueDateTime", m.issueDate),
      el("ram:IncludedNote", {}, leaf("ram:Content", m.notes)),
    ),
    el(
      "rsm:SupplyChainTradeTransaction",
      {},
      m.lines.map((line) =>
        el(
          "ram:IncludedSupplyChainTradeLineItem",
          {},
          el("ram:AssociatedDocumentLineDocument", {}, leaf("ram:LineID", line.id)),
          el("ram:SpecifiedTradeProduct", {}, leaf("ram:Name", line.name)),
          el(
            "ram:SpecifiedLineTradeAgreement",
            {},
            el("ram:NetPriceProductTradePrice", {}, leaf("ram:ChargeAmount", line.price)),
          ),
          el("ram:SpecifiedLineTradeDelivery", {}, leaf("ram:BilledQuantity", line.quantity, { unitCode: "C62" })),
          el(
            "ram:SpecifiedLineTradeSettlement",
            {},
            el(
              "ram:ApplicableTradeTax",
              {},
              leaf("ram:TypeCode", "VAT"),
              leaf("ram:CategoryCode", line.category),
              leaf("ram:RateApplicablePercent", line.percent),
            ),
            el("ram:SpecifiedTradeSettlementLineMonetarySummation", {}, leaf("ram:LineTotalAmount", line.amount)),
          ),
        ),
      ),
      el(
        "ram:ApplicableHeaderTradeAgreement",
        {},
        leaf("ram:BuyerReference", m.buyerReference),
        party("ram:SellerTradeParty", m.seller, true),
        party("ram:BuyerTradeParty", m.buyer, false),
        el("ram:BuyerOrderReferencedDocument", {}, leaf("ram:IssuerAssignedID", m.orderReference)),
      ),
      el(
        "ram:ApplicableHeaderTradeDelivery",
        {},
        m.deliverTo && el("ram:ShipToTradeParty", {}, address(m.deliverTo)),
        el("ram:ActualDeliverySupplyChainEvent", {}, date("ram:OccurrenceDateTime", m.deliveryDate)),
      ),
      el(
        "ram:ApplicableHeaderTradeSettlement",
        {},
        leaf("ram:PaymentReference", m.paymentReference),
        leaf("ram:InvoiceCurrencyCode", m.currency),
        m.paymentMeans.map((p) =>
          el(
            "ram:SpecifiedTradeSettlementPaymentMeans",
            {},
            leaf("ram:TypeCode", p.code),
            leaf("ram:Information", p.text),
            el(
              "ram:PayeePartyCreditorFinancialAccount",
              {},
              leaf("ram:IBANID", p.iban),
              leaf("ram:AccountName", p.accountName),
            ),
            el("ram:PayeeSpecifiedCreditorFinancialInstitution", {}, leaf("ram:BICID", p.bic)),
          ),
        ),
        m.taxes.map((t) =>
          el(
            "ram:ApplicableTradeTax",
            {},
            leaf("ram:CalculatedAmount", t.tax),
            leaf("ram:TypeCode", "VAT"),
            leaf("ram:ExemptionReason", t.exemptionReason),
            leaf("ram:BasisAmount", t.taxable),
            leaf("ram:CategoryCode", t.category),
            leaf("ram:RateApplicablePercent", t.percent),
          ),
        ),
        el(
          "ram:SpecifiedTradePaymentTerms",
          {},
          leaf("ram:Description", m.paymentTerms),
          date("ram:DueDateDateTime", m.dueDate),
        ),
        el(
          "ram:SpecifiedTradeSettlementHeaderMonetarySummation",
          {},
          leaf("ram:LineTotalAmount", m.lineTotal),
          leaf("ram:TaxBasisTotalAmount", m.lineTotal),
          leaf("ram:TaxTotalAmount", m.taxTotal, { currencyID: m.currency }),
          leaf("ram:GrandTotalAmount", m.grandTotal),
          leaf("ram:TotalPrepaidAmount", m.paid),
          leaf("ram:DuePayableAmount", m.due),
        ),
        // A credit note's preceding invoice (BG-3).
        m.precedingInvoice &&
          el(
            "ram:InvoiceReferencedDocument",
            {},
            leaf("ram:IssuerAssignedID", m.precedingInvoice.number),
            el(
              "ram:FormattedIssueDateTime",
              {},
              leaf("qdt:DateTimeString", m.precedingInvoice.issueDate.replace(/-/g, ""), { format: "102" }),
            ),
          ),
      ),
    ),
  );
  return serialize(root!);
}

function party(name: string, p: Party, seller: boolean): XmlElement | null {
  return el(
    name,
    {},
    leaf("ram:Name", p.name),
    el(
      "ram:SpecifiedLegalOrganization",
      {},
      leaf("ram:ID", seller ? p.companyId : p.otherTaxId),
      leaf("ram:TradingBusinessName", p.tradingName),
    ),
    p.contact &&
      el(
        "ram:DefinedTradeContact",
        {},
        leaf("ram:PersonName", p.contact.name),
        el("ram:TelephoneUniversalCommunication", {}, leaf("ram:CompleteNumber", p.contact.phone)),
        el("ram:EmailURIUniversalCommunication", {}, leaf("ram:URIID", p.contact.email)),
      ),
    address(p.address),
    p.electronicAddress &&
      el(
        "ram:URIUniversalCommunication",
        {},
        leaf("ram:URIID", p.electronicAddress.id, { schemeID: p.electronicAddress.scheme }),
      ),
    el("ram:SpecifiedTaxRegistration", {}, leaf("ram:ID", p.vatId, { schemeID: "VA" })),
    // A seller's tax number that is not a VAT identifier is its tax registration identifier (BT-32).
    seller && el("ram:SpecifiedTaxRegistration", {}, leaf("ram:ID", p.otherTaxId, { schemeID: "FC" })),
  );
}

function address(a: Address): XmlElement | null {
  return el(
    "ram:PostalTradeAddress",
    {},
    leaf("ram:PostcodeCode", a.postalCode),
    leaf("ram:LineOne", a.line1),
    leaf("ram:LineTwo", a.line2),
    leaf("ram:CityName", a.city),
    leaf("ram:CountryID", a.country),
    leaf("ram:CountrySubDivisionName", a.region),
  );
}
