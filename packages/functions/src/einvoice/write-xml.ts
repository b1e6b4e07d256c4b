import { writeCii } from "./cii";
import { buildModel } from "./model";
import { missingForEInvoice } from "./requirements";
import type { EInvoiceFormat, EInvoiceSource } from "./source";
import { writeUbl } from "./ubl";

/**
 * The XML of the XML formats, in its own module (not write-einvoice.ts) so that what writes only XML (the Peppol
 * hand-over in the peppol queue's worker and the peppol job) does not bundle Factur-X's pdf-lib.
 * Throws if the invoice lacks what the format needs.
 */
export function writeEInvoiceXml(source: EInvoiceSource, format: Exclude<EInvoiceFormat, "facturx">): string {
  const missing = missingForEInvoice(source, format);
  if (missing.length > 0) throw new Error(`e-invoice incomplete: ${missing.map((e) => e.path).join(", ")}`);
  const model = buildModel(source, format);
  return format === "cii" ? writeCii(model) : writeUbl(model);
}
