import type { Ctx } from "../deps";
import type { ClientItem } from "../clients/clients";
import { clientRefWrite } from "../clients/clients";
import type { Write } from "../db/commit";
import { entityKey, indexed, type IndexedItem } from "../db/keys";
import { computeTotals, nextLineId, readLineItems, taxBreakdown, type LineItem } from "../documents/line-items";
import { clientCopies } from "../documents/parties";
import { centsOf, formatMoney } from "../money/money";
import { toResource } from "../resource";
import { newPublicToken } from "../tokens";
import { Invoice, type InvoiceStatus, type PaymentMethod } from "./resource";

/** The invoice's stored item; the resource's shape is its response schema (./resource.ts). */
export { INVOICE_STATUSES, PAYMENT_METHODS } from "./resource";
export type { Invoice, InvoiceStatus, PaymentMethod };
/**
 * Two rules about payment, each in one place. An invoice TAKES a payment (manual, mark-paid, card,
 * the pay link's checkout session) once it was sent, until it is paid or void. Its document ASKS for
 * payment (bank details and pay button on the public page and PDF) from the moment it is issued: a
 * finalized invoice may reach its client without `send` (as a PDF, or its public link).
 */
export const PAYABLE_STATUSES: readonly InvoiceStatus[] = ["sent", "overdue"];
export const PAYMENT_REQUESTED_STATUSES: readonly InvoiceStatus[] = ["finalized", ...PAYABLE_STATUSES];

export interface InvoiceItem
  extends Omit<Invoice, "amountDue" | "taxBreakdown" | "creditedAmount" | "voidedAt">,
    IndexedItem {
  version: number;
  /** Σ total of its credit notes (credit-notes/model.ts); absent on items written before them: "0.00". */
  creditedAmount?: string;
  /** When it became void (absent on items written before the field: null). */
  voidedAt?: string | null;
  /** Its credit notes' numbers, in issue order (absent: none); its documents print them. */
  creditNoteNumbers?: string[];
  /** The Peppol participant it was delivered to (documents/view.ts PeppolSent); internal. */
  peppolDeliveredTo?: string;
  /**
   * What of each line earlier credit notes credited (line id → quantity, two decimals), internal:
   * read with the invoice, so a credit note decides what is left of a line on the very version its
   * transaction is conditioned on (the credit notes' own index lags).
   */
  creditedQuantities?: Record<string, string>;
  /**
   * What of each line's amount and tax earlier credit notes credited (line id → two-decimal
   * strings), internal: a line's credits never exceed its amount nor its tax (credit-notes/line-caps.ts).
   * Absent for a line credited before the field existed: derived from its credited quantity.
   */
  creditedLineTotals?: Record<string, { amount: string; tax: string }>;
  /** The id the next new line gets: line ids are never reused within an invoice. */
  nextLineId: number;
  /** The id the invoice's next payment gets (payments/settlement.ts); absent until the first. */
  nextPaymentId?: number;
  /** An auto-send occurrence not yet delivered: on the recurring job's due list at this time. */
  deliverAt?: string;
  /** Where send delivered the invoice (the `to` of send, else the client's email); reminders go there too. */
  recipient?: string | null;
}

/** What the invoice's credit notes took off it, in cents (an item written before credit notes: 0). */
export const creditedCents = (invoice: Pick<InvoiceItem, "creditedAmount">): bigint =>
  centsOf(invoice.creditedAmount ?? "0.00");

/**
 * amountDue = max(0, total − amountPaid − creditedAmount): what is still to be paid (API.md section
 * 6). Derived, never stored; every payment is limited by it and payments/settlement.ts decides the
 * status on it.
 */
export function amountDueCents(invoice: Pick<InvoiceItem, "total" | "amountPaid" | "creditedAmount">): bigint {
  const due = centsOf(invoice.total) - centsOf(invoice.amountPaid) - creditedCents(invoice);
  return due > 0n ? due : 0n;
}

/** The public shape: every field present, `null` where there is no value; the breakdown from the lines. */
export function toInvoice(item: InvoiceItem): Invoice {
  const amountDue = formatMoney(amountDueCents(item));
  return {
    ...toResource({ ...item, amountDue, creditedAmount: item.creditedAmount ?? "0.00" }, Invoice),
    lineItems: readLineItems(item.lineItems),
    taxBreakdown: taxBreakdown(item.lineItems),
  };
}

export const invoiceKey = (userId: string, id: number) => entityKey(userId, "INVOICE", id);

export interface DraftFields {
  currency?: string;
  issueDate?: string | null;
  dueDate?: string | null;
  notes?: string | null;
  terms?: string | null;
  altProcessorPaymentLink?: string | null;
  recurringScheduleId?: number | null;
  estimateId?: number | null;
  taxExemptionReason?: string | null;
  buyerReference?: string | null;
  purchaseOrderReference?: string | null;
  deliveryDate?: string | null;
}

/** A new draft invoice item for `client`, with its lines already built (ids from 1). */
export function newDraftInvoice(
  ctx: Pick<Ctx, "userId">,
  id: number,
  client: Pick<ClientItem, "id" | "name" | "email" | "currency" | "address" | "taxId">,
  lines: LineItem[],
  fields: DraftFields,
  now: string,
): InvoiceItem {
  return indexed<InvoiceItem>({
    ...invoiceKey(ctx.userId, id),
    userId: ctx.userId,
    version: 1,
    id,
    clientId: client.id,
    invoiceNumber: null,
    status: "draft",
    currency: fields.currency ?? client.currency,
    ...computeTotals(lines),
    amountPaid: "0.00",
    creditedAmount: "0.00",
    notes: fields.notes ?? null,
    terms: fields.terms ?? null,
    dueDate: fields.dueDate ?? null,
    issueDate: fields.issueDate ?? null,
    sentAt: null,
    paidAt: null,
    voidedAt: null,
    peppolDelivery: null,
    publicToken: newPublicToken(),
    ...clientCopies(client),
    seller: null,
    lineItems: lines,
    nextLineId: nextLineId(lines),
    cardProcessorPaymentLink: null,
    cardProcessorCheckoutSessionId: null,
    altProcessorPaymentLink: fields.altProcessorPaymentLink ?? null,
    paymentMethod: null,
    paymentReference: null,
    recurringScheduleId: fields.recurringScheduleId ?? null,
    estimateId: fields.estimateId ?? null,
    taxExemptionReason: fields.taxExemptionReason ?? null,
    buyerReference: fields.buyerReference ?? null,
    purchaseOrderReference: fields.purchaseOrderReference ?? null,
    deliveryDate: fields.deliveryDate ?? null,
    createdAt: now,
    updatedAt: now,
  });
}

/**
 * The writes that create an invoice: the item (never overwriting) and its client's reference count,
 * for the caller's transaction (a create, an estimate's conversion, a schedule's occurrence).
 */
export function createInvoiceWrites(ctx: Ctx, item: InvoiceItem): Write[] {
  return [
    { op: { Put: { TableName: ctx.db.table, Item: item, ConditionExpression: "attribute_not_exists(pk)" } } },
    clientRefWrite(ctx, item.clientId, 1),
  ];
}
