import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { missingForEInvoice } from "@invoicing/functions/einvoice/requirements";
import { writeEInvoiceXml } from "@invoicing/functions/einvoice/write-xml";
import { peppolIdProblem } from "@invoicing/core/peppol/participant-id";
import type { EInvoiceSource } from "@invoicing/functions/einvoice/source";
import { CASES, SELLER, invoice } from "../einvoice/fixtures";
import { ARTEFACTS, checkXml, firedRules, OFFICIAL, officialValidation, schematron } from "../einvoice/validators";
import { ABROAD_CASES, GERMAN_CASES, PEPPOL_CASES } from "./fixtures";

/**
 * Peppol BIS Billing 3.0 (API.md section 19): every document of the set passes the official EN
 * 16931 UBL rules and OpenPEPPOL's PEPPOL-EN16931-UBL rules (3.0.19) with no fatal or error, in
 * every test run (the validators run as test/einvoice does: one Java process for all of it); the
 * `ubl`, `cii` and `xrechnung` formats carry the parties' Peppol identifiers as electronic
 * addresses and still pass their own validators; `e_invoice_incomplete` names what Peppol needs.
 */
const BIS = "urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0";
const BILLING = "urn:fdc:peppol.eu:2017:poacc:billing:01:1.0";

const peppolDocs = Object.entries(PEPPOL_CASES).map(([name, source]) => ({
  name,
  source,
  xml: writeEInvoiceXml(source, "peppol"),
}));

/** The endpoint ids (scheme, id) of a UBL document: the seller's, then the buyer's. */
const endpoints = (xml: string) =>
  [...xml.matchAll(/<cbc:EndpointID schemeID="([^"]*)">([^<]*)<\/cbc:EndpointID>/g)].map((m) => `${m[1]}:${m[2]}`);

describe("the Peppol set", () => {
  test("twenty and more documents beyond the German set: every tax category, invoices and credit notes", () => {
    expect(Object.keys(ABROAD_CASES).length).toBeGreaterThanOrEqual(20);
    const categories = new Set(Object.values(PEPPOL_CASES).flatMap((c) => c.lineItems.map((l) => l.taxCategory)));
    expect(categories.size).toBe(7);
    const abroad = Object.values(ABROAD_CASES);
    expect(abroad.filter((c) => c.correcting).length).toBeGreaterThanOrEqual(8);
    expect(new Set(abroad.map((c) => c.seller?.address?.country)).size).toBeGreaterThanOrEqual(9);
    expect(abroad.some((c) => c.lineItems.length >= 50)).toBe(true);
    expect(abroad.some((c) => c.lineItems.some((l) => l.unitPrice.startsWith("-")))).toBe(true);
    for (const [name, source] of Object.entries(PEPPOL_CASES)) {
      expect(peppolIdProblem(source.sellerPeppolId!), name).toBeNull();
      expect(peppolIdProblem(source.buyerPeppolId!), name).toBeNull();
      expect(missingForEInvoice(source, "peppol"), name).toEqual([]);
    }
  });

  test("BIS 3.0 identifiers, the root and type code, the endpoint ids from peppolId", () => {
    for (const { name, source, xml } of peppolDocs) {
      expect(xml, name).toContain(`<cbc:CustomizationID>${BIS}</cbc:CustomizationID>`);
      expect(xml, name).toContain(`<cbc:ProfileID>${BILLING}</cbc:ProfileID>`);
      if (source.correcting) {
        expect(xml, name).toContain("<CreditNote xmlns=");
        expect(xml, name).toContain("<cbc:CreditNoteTypeCode>381</cbc:CreditNoteTypeCode>");
      } else {
        expect(xml, name).toContain("<Invoice xmlns=");
        expect(xml, name).toContain("<cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode>");
      }
      expect(endpoints(xml), name).toEqual([source.sellerPeppolId, source.buyerPeppolId]);
    }
  });

  test("a Danish seller's pay link is no payment means (DK-R-005), its CVR carries scheme 0184", () => {
    const dk = peppolDocs.find((d) => d.name === "dk-standard-card")!.xml;
    expect(dk).not.toContain('<cbc:PaymentMeansCode name="Pay online');
    expect(dk).toContain('<cbc:CompanyID schemeID="0184">12345678</cbc:CompanyID>');
    const nl = peppolDocs.find((d) => d.name === "nl-nl-standard")!.xml;
    expect(nl).toContain('<cbc:CompanyID schemeID="0106">12345678</cbc:CompanyID>');
    expect(nl).toContain('<cbc:CompanyID schemeID="0106">87654321</cbc:CompanyID>');
    expect(nl).not.toContain(">68<");
  });

  test("ubl, cii and xrechnung carry peppolId as the electronic address when set, else the email", () => {
    const source = GERMAN_CASES["single-rate"]!;
    for (const format of ["ubl", "xrechnung"] as const) {
      expect(endpoints(writeEInvoiceXml(source, format))).toEqual(["9930:DE123456789", "9930:DE987654321"]);
      expect(endpoints(writeEInvoiceXml(CASES["single-rate"]!, format))).toEqual([
        `EM:${SELLER.email}`,
        "EM:einkauf@beispiel.de",
      ]);
    }
    const cii = writeEInvoiceXml(source, "cii");
    expect(cii).toContain('<ram:URIID schemeID="9930">DE123456789</ram:URIID>');
    expect(cii).toContain('<ram:URIID schemeID="9930">DE987654321</ram:URIID>');
  });
});

describe("e_invoice_incomplete for Peppol", () => {
  const base = ABROAD_CASES["be-standard"]!;
  const paths = (source: EInvoiceSource) => missingForEInvoice(source, "peppol").map((e) => e.path);

  test("both parties' peppolId and a buyer or order reference", () => {
    expect(paths({ ...base, sellerPeppolId: null, buyerPeppolId: null, purchaseOrderReference: null })).toEqual([
      "profile.peppolId",
      "client.peppolId",
      "buyerReference",
    ]);
    // An order reference alone is enough (PEPPOL-EN16931-R003); a buyer reference alone too.
    expect(paths({ ...base, buyerReference: null })).toEqual([]);
    expect(paths({ ...base, buyerReference: "REF", purchaseOrderReference: null })).toEqual([]);
    // A credit note takes the reference from its invoice.
    const cn = ABROAD_CASES["cn-be-standard-partial"]!;
    expect(paths({ ...cn, buyerReference: null, purchaseOrderReference: null })).toEqual(["invoice.buyerReference"]);
    // The other formats do not need them.
    expect(missingForEInvoice({ ...base, sellerPeppolId: null, buyerPeppolId: null }, "ubl")).toEqual([]);
  });

  test("German seller and buyer: Germany's rules; a Dutch seller: address, registration, payment", () => {
    const de = GERMAN_CASES["single-rate"]!;
    expect(
      paths({ ...de, buyerReference: null, seller: { ...SELLER, contactName: null, phone: null, bankAccount: null } }),
    ).toEqual(["buyerReference", "profile.contactName", "profile.phone", "profile.bankAccount"]);
    const nl = ABROAD_CASES["nl-nl-standard"]!;
    expect(
      paths({
        ...nl,
        seller: {
          ...nl.seller!,
          companyId: "KVK-1",
          bankAccount: null,
          address: { ...nl.seller!.address!, line1: null },
        },
        clientTaxId: "123",
      }),
    ).toEqual(["profile.address.line1", "profile.companyId", "profile.bankAccount", "client.taxId"]);
  });

  test("country rules: Danish CVR, Norwegian and Swedish VAT numbers, Swedish rates, Greek sellers", () => {
    const dk = ABROAD_CASES["dk-standard-card"]!;
    expect(paths({ ...dk, seller: { ...dk.seller!, companyId: null } })).toEqual(["profile.companyId"]);
    const no = ABROAD_CASES["no-standard"]!;
    expect(paths({ ...no, seller: { ...no.seller!, taxId: "NO987654325" } })).toEqual(["profile.taxId"]);
    const se = ABROAD_CASES["se-standard"]!;
    expect(paths({ ...se, seller: { ...se.seller!, taxId: "SE55603607" } })).toEqual(["profile.taxId"]);
    const seNineteen = invoice({
      seller: se.seller,
      sellerPeppolId: se.sellerPeppolId,
      buyerPeppolId: se.buyerPeppolId,
      clientAddress: se.clientAddress,
      lines: [["A", "1", "10.00", "0.19"]],
    });
    expect(paths(seNineteen)).toEqual(["lineItems"]);
    const gr = {
      ...dk,
      seller: { ...dk.seller!, taxId: "EL123456789", address: { ...dk.seller!.address!, country: "GR" } },
    };
    expect(paths(gr)).toEqual(["profile.taxId"]);
  });
});

describe.runIf(officialValidation())("the official validators (EN 16931 UBL, PEPPOL-EN16931-UBL 3.0.19)", () => {
  test("every Peppol document passes both, and the other formats with peppolId pass theirs", async () => {
    const dir = mkdtempSync(join(tmpdir(), "peppol-bis-"));
    const dirs = { peppol: "peppol", ubl: "ubl", xrechnung: "xrechnung", cii: "cii" } as const;
    for (const sub of Object.values(dirs)) mkdirSync(join(dir, sub));
    // The other formats, with the parties' Peppol identifiers as electronic addresses: an invoice
    // and a credit note to a German, a French and an American buyer.
    const others = ["single-rate", "reverse-charge", "export", "cn-single-rate-full", "cn-export"].map(
      (name) => [name, GERMAN_CASES[name]!] as const,
    );
    for (const { name, xml } of peppolDocs) writeFileSync(join(dir, "peppol", `${name}.xml`), xml);
    for (const [name, source] of others) {
      for (const format of ["ubl", "xrechnung", "cii"] as const)
        writeFileSync(join(dir, format, `${name}.xml`), writeEInvoiceXml(source, format));
    }
    // Controls: a Peppol invoice and credit note without their endpoints must fail R010 and R020.
    mkdirSync(join(dir, "controls"));
    for (const name of ["single-rate", "cn-single-rate-full"]) {
      const bare = writeEInvoiceXml(PEPPOL_CASES[name]!, "peppol").replace(
        /\s*<cbc:EndpointID[^>]*>[^<]*<\/cbc:EndpointID>/g,
        "",
      );
      writeFileSync(join(dir, "controls", `${name}.xml`), bare);
    }
    const wf = await checkXml(peppolDocs.map((d) => join(dir, "peppol", `${d.name}.xml`)));
    expect(wf).toEqual({});
    const runs = [
      { xslt: OFFICIAL.enUbl, input: "peppol" },
      { xslt: OFFICIAL.peppolUbl, input: "peppol" },
      { xslt: OFFICIAL.enUbl, input: "ubl" },
      { xslt: OFFICIAL.xrechnungUbl, input: "xrechnung" },
      { xslt: OFFICIAL.enCii, input: "cii" },
      { xslt: OFFICIAL.peppolUbl, input: "controls" },
    ];
    const reports = await schematron(
      runs.map((r, n) => ({
        xslt: join(ARTEFACTS!, r.xslt),
        inputDir: join(dir, r.input),
        outputDir: join(dir, `svrl-${n}`),
      })),
    );
    for (const [n, r] of runs.slice(0, -1).entries()) expect(reports[n], `${r.input}: ${r.xslt}`).toEqual([]);
    // The Peppol rules fired on an invoice and a credit note (a validator that checks nothing fails).
    expect(firedRules(join(dir, "svrl-1", "be-standard.xml"))).toBeGreaterThan(10);
    expect(firedRules(join(dir, "svrl-1", "cn-be-standard-partial.xml"))).toBeGreaterThan(10);
    const controls = reports.at(-1)!;
    for (const name of ["single-rate", "cn-single-rate-full"]) {
      const ids = controls.filter((f) => f.file === `${name}.xml`).map((f) => f.id);
      expect(ids, name).toContain("PEPPOL-EN16931-R010");
      expect(ids, name).toContain("PEPPOL-EN16931-R020");
    }
  });
});
