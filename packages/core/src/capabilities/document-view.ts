/** The image types a logo may have (profile/image.ts checks the bytes). */
export type ImageType = "image/png" | "image/jpeg";

/** A stored image (the profile's logo) as documents draw it. */
export interface Logo {
  contentType: ImageType;
  bytes: Uint8Array;
  width: number;
  height: number;
}

/**
 * What a client sees of an invoice, an estimate or a credit note: the public page, the PDF and the email render
 * this same view, so they cannot disagree, and it holds only what the client may see (no user id,
 * no internal keys, no other record). Values are display strings; user text stays raw here and is
 * escaped by each renderer (HTML escaping on the page, plain text in the PDF).
 */
export interface LabelledValue {
  label: string;
  value: string;
}

export interface PartyView {
  name: string;
  /** The registered name, when it differs from the name shown. */
  legalName: string | null;
  addressLines: string[];
  /** VAT number, company number, email, phone, website: whichever are set. */
  details: LabelledValue[];
}

export interface DocumentView {
  kind: "invoice" | "estimate" | "credit_note";
  /** "Invoice INV-000001", "Estimate EST-000001", "Draft invoice", "Credit note CN-000001". */
  title: string;
  /** A credit note's "Credit note for invoice INV-000001 of 2 Nov 2026"; null for the others. */
  reference: string | null;
  /** A credit note's memo, shown with its reference; null for the others. */
  memo: string | null;
  number: string | null;
  status: string;
  statusLabel: string;
  draft: boolean;
  currency: string;
  logo: Logo | null;
  /** Null when the business has not filled in its profile yet. */
  seller: PartyView | null;
  billTo: PartyView;
  /**
   * "Sent via Peppol to 0208:0123456789" once the document was delivered over Peppol (API.md
   * section 19), with the identifier it went to; null otherwise.
   */
  delivery: string | null;
  /** Number, dates, references: the facts block next to "Bill to". */
  facts: LabelledValue[];
  lines: { description: string; quantity: string; unitPrice: string; taxRate: string; amount: string }[];
  /** One row per tax breakdown entry: "VAT 19 % on 3,840.00" → "729.60". */
  taxRows: LabelledValue[];
  totals: (LabelledValue & { emphasis?: boolean })[];
  taxExemptionReason: string | null;
  /** Bank transfer details with the invoice number as reference, while something is due. */
  payment: { heading: string; rows: LabelledValue[] } | null;
  /** Where the pay button goes; null: no button. */
  payLink: string | null;
  notes: string | null;
  terms: string | null;
  footer: string | null;
}
