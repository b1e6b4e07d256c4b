/**
 * The port every Peppol access point provider is reached through (docs/peppol.md, "Adding a
 * provider"). The service never speaks Peppol's AS4 itself: a certified access point does, and this
 * is all the service asks of one. One adapter exists: Storecove's REST API v2 (storecove.ts).
 */
export interface PeppolProvider {
  /** For logs and docs: "storecove". */
  readonly name: string;
  /**
   * Registers a business as a participant that sends and receives invoices under its Peppol
   * identifier. Returns the provider's reference of the registration and whether it is active.
   */
  register(participant: PeppolParticipant): Promise<{ reference: string; status: "pending" | "active" }>;
  /** Removes a registration made by `register`. */
  deregister(reference: string, peppolId: string): Promise<void>;
  /** Whether `peppolId` receives this document type on the network (the SMP lookup). */
  canReceive(peppolId: string, documentType: PeppolDocumentType): Promise<boolean>;
  /** Hands a Peppol BIS Billing 3.0 UBL document over for delivery; returns the provider's reference. */
  submit(submission: PeppolSubmission): Promise<{ reference: string }>;
  /** What the provider knows of a submission now. */
  outcome(reference: string): Promise<PeppolOutcome>;
}

export type PeppolDocumentType = "invoice" | "credit_note";

/** Which document a delivery carries: an invoice or a credit note, by its table kind. */
export type PeppolDocumentKind = "INVOICE" | "CREDITNOTE";

export interface PeppolParticipant {
  peppolId: string;
  name: string;
  address: { line1: string | null; city: string | null; postalCode: string | null; country: string };
}

export interface PeppolSubmission {
  /** The sender's registration (`register`'s reference). */
  sender: string;
  receiverPeppolId: string;
  documentType: PeppolDocumentType;
  /** The UBL document itself. */
  ubl: string;
  /** Makes a repeated hand-over of the same document one submission at the provider. */
  idempotencyKey: string;
}

export type PeppolOutcome = { status: "pending" } | { status: "delivered" } | { status: "failed"; error: string };

/** The provider could not be reached or failed (5xx, a timeout): the hand-over is tried again later. */
export class PeppolProviderUnavailable extends Error {
  override name = "PeppolProviderUnavailable";
}

/** The provider refused the request (4xx): trying again changes nothing; `message` is its reason. */
export class PeppolProviderRefused extends Error {
  override name = "PeppolProviderRefused";
}
