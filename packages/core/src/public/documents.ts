import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { Deps } from "../deps";
import { entitySk } from "../db/keys";
import type { CreditNoteItem } from "../credit-notes/model";
import type { EstimateItem } from "../estimates/model";
import type { InvoiceItem } from "../invoices/model";
import { PUBLIC_TOKEN_SHAPE } from "../tokens";

/**
 * The public pages' only way in: a token names one invoice, estimate or credit note, and nothing else of its
 * owner is reachable from it. A token of the wrong shape is answered without a database call;
 * a draft is not public (its token is not yet meant to be shared). Both come back as "not found",
 * exactly like a token that names nothing.
 */
type PublicDocument =
  | { kind: "invoice"; item: InvoiceItem }
  | { kind: "estimate"; item: EstimateRecord }
  | { kind: "credit_note"; item: CreditNoteItem };

type EstimateRecord = EstimateItem;

/** Sort key prefixes of the two kinds (db/keys.ts entitySk). */
const INVOICE_SK = entitySk("INVOICE", 1).replace(/\d+$/, "");
const ESTIMATE_SK = entitySk("ESTIMATE", 1).replace(/\d+$/, "");
/**
 * A credit note carries its `publicToken` as a top-level attribute like invoices and estimates, so
 * its item is in the byToken index with no key of its own; it is never a draft (issued = final).
 */
const CREDIT_NOTE_SK = entitySk("CREDITNOTE", 1).replace(/\d+$/, "");

async function findPublicDocument(deps: Pick<Deps, "db">, token: string): Promise<PublicDocument | undefined> {
  if (!PUBLIC_TOKEN_SHAPE.test(token)) return undefined;
  const out = await deps.db.doc.send(
    new QueryCommand({
      TableName: deps.db.table,
      IndexName: "byToken",
      KeyConditionExpression: "publicToken = :t",
      ExpressionAttributeValues: { ":t": token },
    }),
  );
  for (const item of out.Items ?? []) {
    // The sort key says what the record is (an invoice's and an estimate's never look alike).
    const sk = String(item.sk);
    if (item.publicToken !== token || item.status === "draft") continue;
    if (sk.startsWith(INVOICE_SK)) return { kind: "invoice", item: item as InvoiceItem };
    if (sk.startsWith(ESTIMATE_SK)) return { kind: "estimate", item: item as EstimateRecord };
    if (sk.startsWith(CREDIT_NOTE_SK)) return { kind: "credit_note", item: item as CreditNoteItem };
  }
  return undefined;
}

export async function findPublicInvoice(deps: Pick<Deps, "db">, token: string): Promise<InvoiceItem | undefined> {
  const found = await findPublicDocument(deps, token);
  return found?.kind === "invoice" ? found.item : undefined;
}

export async function findPublicEstimate(deps: Pick<Deps, "db">, token: string): Promise<EstimateRecord | undefined> {
  const found = await findPublicDocument(deps, token);
  return found?.kind === "estimate" ? found.item : undefined;
}

/** The credit note a public token names (GET /public/credit-notes/{publicToken}), or undefined. */
export async function findPublicCreditNote(deps: Pick<Deps, "db">, token: string): Promise<CreditNoteItem | undefined> {
  const found = await findPublicDocument(deps, token);
  return found?.kind === "credit_note" ? found.item : undefined;
}
