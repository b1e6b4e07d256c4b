import type { Ctx } from "../context";
import type { ClientItem } from "../clients/clients";
import { clientRefWrite } from "../clients/clients";
import type { Write } from "../db/commit";
import { clientIndexKeys, entityKey, statusIndexKeys, type IndexedItem } from "../db/keys";
import { computeTotals, nextLineId, type LineItem } from "../documents/line-items";
import { toResource } from "../documents/resource";
import { centsOf, formatMoney } from "../money/money";
import { newPublicToken } from "../tokens";

/** The invoice resource and its stored item. */
export const INVOICE_STATUSES = ["draft", "finalized", "sent", "paid", "overdue", "void"] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];
export const PAYMENT_METHODS = ["cash", "check", "bank_transfer", "other"] as const;
/** `card` is set only by the card processor's payments, never by mark-paid or a manual payment. */
export type PaymentMethod = (typeof PAYMENT_METHODS)[number] | "card";

export interface Invoice {
  id: number;
  clientId: number;
  invoiceNumber: string | null;
  status: InvoiceStatus;
  currency: string;
  subtotal: string;
  taxTotal: string;
  total: string;
  amountPaid: string;
  /** total − amountPaid: what is still to be paid (derived, never stored). */
  amountDue: string;
  notes: string | null;
  terms: string | null;
  dueDate: string | null;
  issueDate: string | null;
  sentAt: string | null;
  paidAt: string | null;
  publicToken: string;
  clientName: string;
  clientEmail: string | null;
  lineItems: LineItem[];
  cardProcessorPaymentLink: string | null;
  cardProcessorCheckoutSessionId: string | null;
  altProcessorPaymentLink: string | null;
  paymentMethod: PaymentMethod | null;
  paymentReference: string | null;
  recurringScheduleId: number | null;
  estimateId: number | null;
  createdAt: string;
  updatedAt: string;
}

export interface InvoiceItem extends Omit<Invoice, "amountDue">, IndexedItem {
  version: number;
  /** The id the next new line gets: line ids are never reused within an invoice. */
  nextLineId: number;
  /** The id the invoice's next payment gets (payments/settlement.ts); absent until the first. */
  nextPaymentId?: number;
  /** Where send delivered the invoice (the `to` of send, else the client's email); reminders go there too. */
  recipient?: string | null;
}

const INVOICE_FIELDS = [
  "id", "clientId", "invoiceNumber", "status", "currency", "subtotal", "taxTotal", "total", "amountPaid", "amountDue",
  "notes", "terms", "dueDate", "issueDate", "sentAt", "paidAt", "publicToken", "clientName", "clientEmail",
  "lineItems", "cardProcessorPaymentLink", "cardProcessorCheckoutSessionId", "altProcessorPaymentLink",
  "paymentMethod", "paymentReference", "recurringScheduleId", "estimateId", "createdAt", "updatedAt",
] as const satisfies readonly (keyof Invoice)[];

/** The public shape: every field present, `null` where there is no value. */
export function toInvoice(item: InvoiceItem): Invoice {
  const amountDue = formatMoney(centsOf(item.total) - centsOf(item.amountPaid));
  return toResource<Invoice>({ ...item, amountDue }, INVOICE_FIELDS);
}

export const invoiceKey = (userId: string, id: number) => entityKey(userId, "INVOICE", id);
export const invoiceStatusKeys = (userId: string, status: InvoiceStatus, id: number) =>
  statusIndexKeys(userId, "INVOICE", status, id);

export interface DraftFields {
  currency?: string;
  issueDate?: string | null;
  dueDate?: string | null;
  notes?: string | null;
  terms?: string | null;
  altProcessorPaymentLink?: string | null;
  recurringScheduleId?: number | null;
  estimateId?: number | null;
}

/** A new draft invoice item for `client`, with its lines already built (ids from 1). */
export function newDraftInvoice(
  ctx: Pick<Ctx, "userId">,
  id: number,
  client: Pick<ClientItem, "id" | "name" | "email" | "currency">,
  lines: LineItem[],
  fields: DraftFields,
  now: string,
): InvoiceItem {
  return {
    ...invoiceKey(ctx.userId, id),
    ...invoiceStatusKeys(ctx.userId, "draft", id),
    ...clientIndexKeys(ctx.userId, "INVOICE", client.id, id),
    userId: ctx.userId,
    version: 1,
    id,
    clientId: client.id,
    invoiceNumber: null,
    status: "draft",
    currency: fields.currency ?? client.currency,
    ...computeTotals(lines),
    amountPaid: "0.00",
    notes: fields.notes ?? null,
    terms: fields.terms ?? null,
    dueDate: fields.dueDate ?? null,
    issueDate: fields.issueDate ?? null,
    sentAt: null,
    paidAt: null,
    publicToken: newPublicToken(),
    clientName: client.name,
    clientEmail: client.email ?? null,
    lineItems: lines,
    nextLineId: nextLineId(lines),
    cardProcessorPaymentLink: null,
    cardProcessorCheckoutSessionId: null,
    altProcessorPaymentLink: fields.altProcessorPaymentLink ?? null,
    paymentMethod: null,
    paymentReference: null,
    recurringScheduleId: fields.recurringScheduleId ?? null,
    estimateId: fields.estimateId ?? null,
    createdAt: now,
    updatedAt: now,
  };
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
