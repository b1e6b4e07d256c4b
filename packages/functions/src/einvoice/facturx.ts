import { createHash } from "node:crypto";
import { PDFArray, PDFDict, PDFDocument, PDFHexString, PDFName, PDFString } from "pdf-lib";
import { SRGB_PROFILE_NAME, srgbProfile } from "./srgb-profile";
import { xmlSafe } from "./xml";

/**
 * Factur-X (ZUGFeRD 2): the invoice's own PDF, unchanged on its pages, with the CII document
 * attached as `factur-x.xml` (relationship "Alternative": the XML is the same invoice) and the
 * XMP metadata that declares PDF/A-3 and the Factur-X profile (EN 16931). Readers find the XML
 * through the catalog's /AF array and the embedded-files name tree.
 *
 * What PDF/A-3b asks of the file beyond the attachment and the XMP: fonts embedded (the caller
 * renders the PDF with `archival: true`, pdf/fonts.ts), an sRGB output intent for the DeviceRGB
 * the pages draw in (srgb-profile.ts), and a file identifier in the trailer. docs/e-invoices.md
 * says how far this is checked.
 */
const FACTURX_FILE_NAME = "factur-x.xml";
const FX_NS = "urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#";

interface FacturXOptions {
  title: string;
  now: Date;
}

export async function toFacturX(pdfBytes: Uint8Array, ciiXml: string, options: FacturXOptions): Promise<Uint8Array> {
  const pdf = await PDFDocument.load(pdfBytes, { updateMetadata: false });
  const { context, catalog } = pdf;
  const xml = new TextEncoder().encode(ciiXml);
  const date = PDFString.fromDate(options.now);

  const file = context.register(
    context.flateStream(xml, {
      Type: "EmbeddedFile",
      Subtype: "text/xml",
      Params: { Size: xml.length, ModDate: date, CreationDate: date },
    }),
  );
  const spec = context.register(
    context.obj({
      Type: "Filespec",
      F: PDFString.of(FACTURX_FILE_NAME),
      UF: PDFHexString.fromText(FACTURX_FILE_NAME),
      EF: { F: file, UF: file },
      Desc: PDFString.of("Factur-X invoice (EN 16931)"),
      AFRelationship: "Alternative",
    }),
  );
  // The renderer attaches nothing, so the embedded-files tree is this one file.
  catalog.set(PDFName.of("Names"), context.obj({ EmbeddedFiles: { Names: [PDFString.of(FACTURX_FILE_NAME), spec] } }));
  catalog.set(PDFName.of("AF"), context.obj([spec]));

  // PDF/A wants the XMP to state every entry of the document information dictionary that it has
  // a property for, with the same value: title, author, subject, creator, producer, dates.
  const info: XmpInfo = {
    title: pdf.getTitle() ?? options.title,
    author: pdf.getAuthor(),
    subject: pdf.getSubject(),
    creator: pdf.getCreator() ?? "Invoicing",
    created: pdf.getCreationDate() ?? options.now,
    modified: options.now,
    producer: pdf.getProducer() ?? "Invoicing",
  };
  pdf.setTitle(info.title);
  pdf.setCreator(info.creator);
  pdf.setProducer(info.producer);
  pdf.setCreationDate(info.created);
  const xmp = new TextEncoder().encode(xmpMetadata(info));
  const metadata = context.register(context.stream(xmp, { Type: "Metadata", Subtype: "XML", Length: xmp.length }));
  catalog.set(PDFName.of("Metadata"), metadata);
  catalog.set(PDFName.of("PageMode"), PDFName.of("UseAttachments"));

  const profile = srgbProfile();
  const icc = context.register(context.flateStream(profile, { N: 3 }));
  const intent = context.obj({
    Type: "OutputIntent",
    S: "GTS_PDFA1",
    OutputConditionIdentifier: PDFString.of(SRGB_PROFILE_NAME),
    Info: PDFString.of(SRGB_PROFILE_NAME),
    DestOutputProfile: icc,
  });
  catalog.set(PDFName.of("OutputIntents"), context.obj([intent]));
  // The file identifier: the same for the same invoice XML, as both halves of a first version are.
  const id = PDFHexString.of(createHash("sha256").update(ciiXml).digest("hex").slice(0, 32));
  context.trailerInfo.ID = context.obj([id, id]);
  pdf.setModificationDate(options.now);
  return pdf.save({ useObjectStreams: false });
}

/** The embedded XML of a Factur-X PDF (for tests and for anyone checking what was sent). */
export async function readFacturXml(pdfBytes: Uint8Array): Promise<string | null> {
  const pdf = await PDFDocument.load(pdfBytes, { updateMetadata: false });
  const af = pdf.catalog.lookupMaybe(PDFName.of("AF"), PDFArray);
  for (let i = 0; i < (af?.size() ?? 0); i++) {
    const spec = af!.lookup(i, PDFDict);
    const name = spec.lookupMaybe(PDFName.of("F"), PDFString, PDFHexString)?.decodeText();
    if (name !== FACTURX_FILE_NAME) continue;
    const ef = spec.lookup(PDFName.of("EF"), PDFDict);
    const stream = ef.lookup(PDFName.of("F"));
    const { decodePDFRawStream } = await import("pdf-lib");
    return new TextDecoder().decode(decodePDFRawStream(stream as never).decode());
  }
  return null;
}

const esc = (s: string) =>
  xmlSafe(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

interface XmpInfo {
  title: string;
  author: string | undefined;
  subject: string | undefined;
  creator: string;
  created: Date;
  modified: Date;
  producer: string;
}

function xmpMetadata(info: XmpInfo): string {
  const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, "Z");
  const property = (name: string, description: string) => `
            <rdf:li rdf:parseType="Resource">
              <pdfaProperty:name>${name}</pdfaProperty:name>
              <pdfaProperty:valueType>Text</pdfaProperty:valueType>
              <pdfaProperty:category>external</pdfaProperty:category>
              <pdfaProperty:description>${description}</pdfaProperty:description>
            </rdf:li>`;
  return `<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/">
  <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
    <rdf:Description rdf:about="" xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/">
      <pdfaid:part>3</pdfaid:part>
      <pdfaid:conformance>B</pdfaid:conformance>
    </rdf:Description>
    <rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/">
      <dc:format>application/pdf</dc:format>
      <dc:title><rdf:Alt><rdf:li xml:lang="x-default">${esc(info.title)}</rdf:li></rdf:Alt></dc:title>${
        info.author === undefined
          ? ""
          : `
      <dc:creator><rdf:Seq><rdf:li>${esc(info.author)}</rdf:li></rdf:Seq></dc:creator>`
      }${
        info.subject === undefined
          ? ""
          : `
      <dc:description><rdf:Alt><rdf:li xml:lang="x-default">${esc(info.subject)}</rdf:li></rdf:Alt></dc:description>`
      }
    </rdf:Description>
    <rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/">
      <xmp:CreatorTool>${esc(info.creator)}</xmp:CreatorTool>
      <xmp:CreateDate>${iso(info.created)}</xmp:CreateDate>
      <xmp:ModifyDate>${iso(info.modified)}</xmp:ModifyDate>
      <xmp:MetadataDate>${iso(info.modified)}</xmp:MetadataDate>
    </rdf:Description>
    <rdf:Description rdf:about="" xmlns:pdf="http://ns.adobe.com/pdf/1.3/">
      <pdf:Producer>${esc(info.producer)}</pdf:Producer>
    </rdf:Description>
    <rdf:Description rdf:about="" xmlns:fx="${FX_NS}">
      <fx:DocumentType>INVOICE</fx:DocumentType>
      <fx:DocumentFileName>${FACTURX_FILE_NAME}</fx:DocumentFileName>
      <fx:Version>1.0</fx:Version>
      <fx:ConformanceLevel>EN 16931</fx:ConformanceLevel>
    </rdf:Description>
    <rdf:Description rdf:about="" xmlns:pdfaExtension="http://www.aiim.org/pdfa/ns/extension/"
        xmlns:pdfaSchema="http://www.aiim.org/pdfa/ns/schema#" xmlns:pdfaProperty="http://www.aiim.org/pdfa/ns/property#">
      <pdfaExtension:schemas>
        <rdf:Bag>
          <rdf:li rdf:parseType="Resource">
            <pdfaSchema:schema>Factur-X PDFA Extension Schema</pdfaSchema:schema>
            <pdfaSchema:namespaceURI>${FX_NS}</pdfaSchema:namespaceURI>
            <pdfaSchema:prefix>fx</pdfaSchema:prefix>
            <pdfaSchema:property>
              <rdf:Seq>${property("DocumentFileName", "The name of the embedded XML document")}${property(
                "DocumentType",
                "The type of the hybrid document in capital letters, e.g. INVOICE or ORDER",
              )}${property("Version", "The actual version of the standard applying to the embedded XML document")}${property(
                "ConformanceLevel",
                "The conformance level of the embedded XML document",
              )}
              </rdf:Seq>
            </pdfaSchema:property>
          </rdf:li>
        </rdf:Bag>
      </pdfaExtension:schemas>
    </rdf:Description>
  </rdf:RDF>
</x:xmpmeta>
<?xpacket end="w"?>`;
}
