import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { toCreditNote } from "@invoicing/core/credit-notes/read";
import type { CreditNoteItem } from "@invoicing/core/credit-notes/model";
import { entityKey } from "@invoicing/core/db/keys";
import { invoiceKey, toInvoice, type InvoiceItem } from "@invoicing/core/invoices/model";
import { peppolAddresses } from "@invoicing/core/peppol/addresses";
import type { PeppolUblWriter } from "@invoicing/core/deps";
import { creditNoteSourceOf } from "../einvoice/credit-note";
import { eInvoiceSourceOf } from "../einvoice/source";
import { writeEInvoiceXml } from "../einvoice/write-xml";
import type { Capability } from "./create-deps";
import { peppolProvider } from "./peppol-provider";

/**
 * What hands Peppol documents over (the stream subscriber, the peppol job, the local server): the
 * provider and the writer of a document's Peppol UBL, with the parties' identifiers as they are now.
 * Carries the e-invoice writer: never imported by the API function.
 */
export const writePeppolUbl: PeppolUblWriter = async (db, userId, kind, id) => {
  const read = async (key: Record<string, unknown>) =>
    (await db.doc.send(new GetCommand({ TableName: db.table, Key: key, ConsistentRead: true }))).Item;
  const document = await read(entityKey(userId, kind, id));
  if (!document) throw new Error(`Peppol hand-over: ${kind} ${id} does not exist`);
  const addresses = await peppolAddresses({ db }, userId, Number(document.clientId));
  const peppolIds = { sellerPeppolId: addresses.seller, buyerPeppolId: addresses.buyer };
  if (kind === "INVOICE") {
    return writeEInvoiceXml({ ...eInvoiceSourceOf(toInvoice(document as InvoiceItem)), ...peppolIds }, "peppol");
  }
  const note = document as CreditNoteItem;
  const invoice = (await read(invoiceKey(userId, note.invoiceId))) as InvoiceItem;
  return writeEInvoiceXml({ ...creditNoteSourceOf(toCreditNote(note), invoice), ...peppolIds }, "peppol");
};

export const peppolHandOver: Capability = (config, env) => ({
  ...peppolProvider(config, env),
  peppolUbl: writePeppolUbl,
});
