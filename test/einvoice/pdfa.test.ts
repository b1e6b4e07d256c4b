import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { inflateSync } from "node:zlib";
import {
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFName,
  PDFRawStream,
  PDFRef,
  type PDFObject,
  type PDFContext,
} from "pdf-lib";
import { beforeAll, describe, expect, it } from "vitest";
import { srgbProfile } from "@invoicing/functions/einvoice/srgb-profile";
import { createTestEnv, type TestEnv, type TestUser } from "../support/env";

/**
 * What PDF/A-3b asks of the Factur-X file beyond its XML and XMP (writer.test.ts checks those):
 * every font's program inside the file, an output intent whose ICC profile is a real sRGB display
 * profile, and a file identifier. Checked on what the API serves. No PDF/A validator (veraPDF)
 * runs here; docs/e-invoices.md says so.
 */
let env: TestEnv;
let alice: TestUser;
let invoice: { id: number; publicToken: string; invoiceNumber: string };

beforeAll(async () => {
  env = await createTestEnv();
  alice = await env.user();
  await alice.call("PATCH", "/profile", {
    businessName: "Muster Design",
    address: { line1: "Hauptstraße 1", city: "Berlin", postalCode: "10115", country: "DE" },
    taxId: "DE123456789",
    email: "rechnung@muster-design.de",
    bankAccount: { accountName: "Muster Design", iban: "DE89 3704 0044 0532 0130 00", bic: "COBADEFFXXX" },
  });
  const client = await alice.call("POST", "/clients", {
    name: "Beispiel AG",
    email: "einkauf@beispiel.de",
    currency: "EUR",
    address: { line1: "Marktplatz 5", city: "München", postalCode: "80331", country: "DE" },
  });
  const lineItems = [
    {
      description: "Gestaltung – Logo «Nord» für Müller & Söhne, 20 €-Pauschale",
      quantity: "2",
      unitPrice: "100.00",
      taxRate: "0.19",
    },
    {
      description: "Łódź workshop (ŁĄ are outside the font: shown decomposed)",
      quantity: "1",
      unitPrice: "50.00",
      taxRate: "0.19",
    },
  ];
  const draft = (await alice.call("POST", "/invoices", { clientId: client.body.id, lineItems })).body;
  invoice = (await alice.call("POST", `/invoices/${draft.id}/finalize`)).body;
});

async function served(path: string): Promise<Uint8Array> {
  const res = await env.app.request(`http://localhost${path}`, { headers: { Authorization: `Bearer ${alice.key}` } });
  expect(res.status, path).toBe(200);
  return new Uint8Array(await res.arrayBuffer());
}

const deref = (context: PDFContext, value: PDFObject | undefined): PDFObject | undefined =>
  value instanceof PDFRef ? context.lookup(value) : value;

/** Every font dictionary the pages use, with its name. */
function fontsOf(pdf: PDFDocument): { name: string; font: PDFDict }[] {
  const out: { name: string; font: PDFDict }[] = [];
  for (const page of pdf.getPages()) {
    const fonts = deref(pdf.context, page.node.Resources()?.get(PDFName.of("Font")));
    if (!(fonts instanceof PDFDict)) continue;
    for (const [key, value] of fonts.entries()) {
      const font = deref(pdf.context, value);
      if (font instanceof PDFDict) out.push({ name: key.decodeText(), font });
    }
  }
  return out;
}

/** The font program of a simple or a composite (Type0) font, if the file carries one. */
function fontProgram(pdf: PDFDocument, font: PDFDict): PDFObject | undefined {
  let described = font;
  if (font.get(PDFName.of("Subtype"))?.toString() === "/Type0") {
    const descendants = deref(pdf.context, font.get(PDFName.of("DescendantFonts"))) as PDFArray;
    described = deref(pdf.context, descendants.get(0)) as PDFDict;
  }
  const descriptor = deref(pdf.context, described.get(PDFName.of("FontDescriptor")));
  if (!(descriptor instanceof PDFDict)) return undefined;
  return ["FontFile", "FontFile2", "FontFile3"].map((k) => descriptor.get(PDFName.of(k))).find(Boolean);
}

describe("Factur-X is drawn as PDF/A-3 asks", () => {
  it("every font is embedded in the Factur-X; the ordinary PDF keeps the standard fonts", async () => {
    const bytes = await served(`/invoices/${invoice.id}/e-invoice?format=facturx`);
    const dir = join("test-artifacts", "einvoice");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "facturx.pdf"), bytes);
    const pdf = await PDFDocument.load(bytes);
    const fonts = fontsOf(pdf);
    expect(fonts.length).toBeGreaterThanOrEqual(2); // regular and bold at least
    for (const { name, font } of fonts) expect(fontProgram(pdf, font), name).toBeDefined();

    const plain = await PDFDocument.load(await served(`/invoices/${invoice.id}/pdf`));
    const plainFonts = fontsOf(plain);
    expect(plainFonts.length).toBeGreaterThanOrEqual(2);
    for (const { name, font } of plainFonts) {
      expect(font.get(PDFName.of("BaseFont"))?.toString(), name).toMatch(/^\/Helvetica/);
      expect(fontProgram(plain, font), name).toBeUndefined();
    }
  });

  it("an sRGB output intent (GTS_PDFA1) with a well-formed ICC display profile, and a file identifier", async () => {
    const pdf = await PDFDocument.load(
      await served(`/public/invoices/${invoice.publicToken}/e-invoice?format=facturx`),
    );
    const intents = pdf.catalog.lookup(PDFName.of("OutputIntents"), PDFArray);
    expect(intents.size()).toBe(1);
    const intent = intents.lookup(0, PDFDict);
    expect(intent.get(PDFName.of("S"))?.toString()).toBe("/GTS_PDFA1");
    const stream = intent.lookup(PDFName.of("DestOutputProfile"));
    if (!(stream instanceof PDFRawStream)) throw new Error("DestOutputProfile is not a stream");
    expect(stream.dict.get(PDFName.of("N"))?.toString()).toBe("3");
    const icc = Buffer.from(inflateSync(stream.getContents()));
    expect(icc.equals(Buffer.from(srgbProfile()))).toBe(true);
    const id = pdf.context.trailerInfo.ID;
    expect(id).toBeInstanceOf(PDFArray);
    expect((id as PDFArray).size()).toBe(2);
  });
  it("the XMP states every document-information entry it has a property for, with the same value", async () => {
    const pdf = await PDFDocument.load(await served(`/invoices/${invoice.id}/e-invoice?format=facturx`), {
      updateMetadata: false,
    });
    const metadata = pdf.catalog.lookup(PDFName.of("Metadata"));
    if (!(metadata instanceof PDFRawStream)) throw new Error("no XMP stream");
    const xmp = new TextDecoder().decode(metadata.getContents());
    const property = (name: string) => xmp.match(new RegExp(`<${name}>(?:<rdf:\\w+>)?(?:<rdf:li[^>]*>)?([^<]*)<`))?.[1];
    expect(property("dc:title")).toBe(pdf.getTitle());
    expect(property("dc:creator")).toBe(pdf.getAuthor());
    expect(pdf.getAuthor()).toBe("Muster Design");
    expect(property("dc:description")).toBe(pdf.getSubject());
    expect(property("xmp:CreatorTool")).toBe(pdf.getCreator());
    expect(property("pdf:Producer")).toBe(pdf.getProducer());
    const instant = (name: string) => Date.parse(property(name)!);
    expect(instant("xmp:CreateDate")).toBe(pdf.getCreationDate()!.getTime());
    expect(instant("xmp:ModifyDate")).toBe(pdf.getModificationDate()!.getTime());
  });
});

describe("the sRGB profile", () => {
  const icc = Buffer.from(srgbProfile());

  it("has the header of an ICC version 2 RGB display profile, its size and tag table consistent", () => {
    expect(icc.readUInt32BE(0)).toBe(icc.length);
    expect(icc.readUInt8(8)).toBe(2);
    expect(icc.toString("latin1", 12, 24)).toBe("mntrRGB XYZ ");
    expect(icc.toString("latin1", 36, 40)).toBe("acsp");
    const tags = new Map<string, { offset: number; size: number }>();
    for (let i = 0; i < icc.readUInt32BE(128); i++) {
      const at = 132 + i * 12;
      tags.set(icc.toString("latin1", at, at + 4), {
        offset: icc.readUInt32BE(at + 4),
        size: icc.readUInt32BE(at + 8),
      });
    }
    // What a matrix/TRC display profile must carry (ICC.1 annex).
    for (const required of ["desc", "cprt", "wtpt", "rXYZ", "gXYZ", "bXYZ", "rTRC", "gTRC", "bTRC"]) {
      const tag = tags.get(required);
      expect(tag, required).toBeDefined();
      expect(tag!.offset % 4).toBe(0);
      expect(tag!.offset + tag!.size).toBeLessThanOrEqual(icc.length);
    }
  });

  it("its primaries add up to the D50 white, and its curve is sRGB's (checked at points the standard tabulates)", () => {
    const tag = (sig: string) => {
      for (let i = 0; i < icc.readUInt32BE(128); i++) {
        const at = 132 + i * 12;
        if (icc.toString("latin1", at, at + 4) === sig) return icc.readUInt32BE(at + 4);
      }
      throw new Error(sig);
    };
    const xyz = (sig: string) => [0, 1, 2].map((k) => icc.readInt32BE(tag(sig) + 8 + 4 * k) / 65536);
    const [r, g, b, white] = [xyz("rXYZ"), xyz("gXYZ"), xyz("bXYZ"), xyz("wtpt")];
    for (let k = 0; k < 3; k++) expect(r[k]! + g[k]! + b[k]!).toBeCloseTo(white[k]!, 2);
    const curve = tag("rTRC");
    const points = icc.readUInt32BE(curve + 8);
    const at = (encoded: number) => icc.readUInt16BE(curve + 12 + 2 * Math.round(encoded * (points - 1))) / 65535;
    expect(at(0)).toBe(0);
    expect(at(1)).toBe(1);
    // Mid grey (encoded 0.5) is about 21.4 % of the light; the linear toe near black is slope 1/12.92.
    expect(at(0.5)).toBeCloseTo(0.214, 2);
    expect(at(0.02)).toBeCloseTo(0.02 / 12.92, 4);
  });
});
