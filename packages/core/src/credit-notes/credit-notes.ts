import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { Ctx } from "../deps";
import { nowIso } from "../deps";
import { commit, type Write } from "../db/commit";
import { takeCounterWrite } from "../db/ids";
import { counterKey, pad } from "../db/keys";
import { Raced } from "../db/optimistic";
import { computeTotals, defaultTaxCategory, taxBreakdown, type TaxCategory } from "../documents/line-items";
import { formatDocumentNumber } from "../documents/numbering";
import { sendDocument, type SendOptions, type SendRules } from "../documents/send";
import { creditNoteEmail } from "./emails";
import { DomainError, type FieldError, invalidTransition, notFound, ValidationError } from "../errors";
import { invoiceKey, type InvoiceItem } from "../invoices/model";
import {
  centsOf,
  formatMoney,
  formatQuantity,
  formatTaxRate,
  lineAmount,
  lineTax,
  parseMoney,
  parseQuantity,
  parseTaxRate,
} from "../money/money";
import { lastCountedPayment } from "../payments/payments";
import { amountDueCents, creditedCents, creditedInvoice, invoiceWrite, untilSettled } from "../payments/settlement";
import { newPublicToken } from "../tokens";
import { creditedSoFar, linePart, storedLineTotals } from "./line-caps";
import {
  type CreditNoteItem,
  creditNoteKey,
  creditNotesOfClientPartition,
  creditNotesOfInvoicePartition,
} from "./model";
import type { CreditNoteLineItem, CreditNoteReason } from "./resource";

/**
 * Credit notes (API.md section 17, docs/credit-notes.md): the correcting document of an issued
 * invoice. Issuing one is ONE transaction of three items — the credit note, the user's CN number
 * counter moved from the value read to the next, and the invoice written whole with its new
 * creditedAmount (and status, paid fields, voidedAt, due-list keys) conditioned on the version read
 * — through the invoice's optimistic loop (untilSettled), the one payments use too. So credit notes,
 * payments, a void and the overdue job queue on the invoice's version: each decides on the invoice
 * as it is, and what the credit notes of an invoice credit together never exceeds its total.
 *
 * A credit note's id is its number's sequence value (CN-000007 is /credit-notes/7): one gapless
 * counter (COUNTER#creditNoteNumber) gives both, taken inside the transaction, so a failed or lost
 * attempt skips no number.
 */
const NUMBER_COUNTER = "creditNoteNumber";

/**
 * A credited line: with `invoiceLineId`, that line of the invoice (and `quantity` at most); without,
 * a free line (`description` and `unitPrice` > 0 required). The route's schema enforces the shapes.
 */
interface CreditNoteLineInput {
  invoiceLineId?: number;
  description?: string;
  quantity?: string | number;
  unitPrice?: string | number;
  taxRate?: string | number;
  taxCategory?: TaxCategory;
}

interface CreditNoteInput {
  lineItems?: CreditNoteLineInput[];
  reason?: CreditNoteReason | null;
  memo?: string | null;
}

/** Invoices a credit note may correct: issued and not void. */
const CREDITABLE = ["finalized", "sent", "overdue", "paid"];

const formatCreditNoteNumber = (n: number): string => formatDocumentNumber("CN", n);

/**
 * POST /invoices/{id}/credit-notes. Checked in API.md's order: an unknown invoice (404), then an
 * `invoiceLineId` the invoice does not have (400 on that line), then the invoice's status
 * (invalid_transition), then the amounts (credit_exceeds_invoice, empty_credit_note).
 */
export async function issueCreditNote(ctx: Ctx, invoiceId: number, input: CreditNoteInput): Promise<CreditNoteItem> {
  const result = await untilSettled(async () => {
    const { invoice, lastNumber } = await readForIssue(ctx, invoiceId);
    checkLineIds(invoice, input.lineItems);
    if (!CREDITABLE.includes(invoice.status)) {
      throw invalidTransition(`invoice ${invoiceId}`, invoice.status, "issue a credit note for");
    }
    const { lines, taxes, quantities, lineTotals } = creditLines(invoice, input.lineItems);
    if (lines.length === 0) throw emptyCreditNote(`nothing of invoice ${invoiceId} is left to credit`);
    const totals = computeTotals(lines, taxes);
    const total = centsOf(totals.total);
    if (total <= 0n) throw emptyCreditNote(`a credit note's total must be above 0 (it would be ${totals.total})`);
    const left = centsOf(invoice.total) - creditedCents(invoice);
    if (total > left) {
      throw exceeds(
        `a credit note of ${totals.total} is more than what is left to credit of invoice ${invoiceId} ` +
          `(${formatMoney(left > 0n ? left : 0n)} of ${invoice.total})`,
      );
    }

    const now = nowIso(ctx);
    const number = lastNumber + 1;
    const dueBefore = amountDueCents(invoice);
    const applied = total < dueBefore ? total : dueBefore;
    const note = newCreditNoteItem(ctx, invoice, number, { lines, taxes }, input, now, {
      applied: formatMoney(applied),
      refund: formatMoney(total - applied),
    });

    let next = creditedInvoice(ctx, invoice, total, undefined);
    // Left paid by the credit: the paid fields are the last payment's, as if it had completed it.
    if (next.status === "paid" && centsOf(invoice.amountPaid) > 0n) {
      next = creditedInvoice(ctx, invoice, total, await lastCountedPayment(ctx, invoiceId));
    }
    next.creditNoteNumbers = [...(invoice.creditNoteNumbers ?? []), note.creditNoteNumber];
    next.creditedQuantities = quantities;
    next.creditedLineTotals = lineTotals;

    const writes: Write[] = [
      // Another credit note of this user took the number first: read again.
      takeCounterWrite(ctx, NUMBER_COUNTER, lastNumber, () => new Raced()),
      {
        op: { Put: { TableName: ctx.db.table, Item: note, ConditionExpression: "attribute_not_exists(pk)" } },
        onConditionFailed: () => new Raced(),
      },
      invoiceWrite(ctx, next, invoice.version),
    ];
    await commit(ctx, writes, note);
    return note;
  });
  return result;
}

/**
 * The invoice and the user's last CN number, read consistently: two GetItems sent together, which
 * a request's reads turn into ONE BatchGetItem with its API key (keys/authorized-db.ts).
 */
async function readForIssue(ctx: Ctx, invoiceId: number) {
  const get = (key: { pk: string; sk: string }) =>
    ctx.db.doc.send(new GetCommand({ TableName: ctx.db.table, Key: key, ConsistentRead: true }));
  const [found, counter] = await Promise.all([
    get(invoiceKey(ctx.userId, invoiceId)),
    get(counterKey(ctx.userId, NUMBER_COUNTER)),
  ]);
  const invoice = found.Item as InvoiceItem | undefined;
  if (!invoice) throw notFound("invoice", invoiceId);
  return { invoice, lastNumber: Number(counter.Item?.value ?? 0) };
}

/** Every `invoiceLineId` names a line of the invoice, else a 400 on that line. */
function checkLineIds(invoice: InvoiceItem, inputs: CreditNoteLineInput[] | undefined): void {
  const ids = new Set(invoice.lineItems.map((line) => line.id));
  const errors: FieldError[] = [];
  inputs?.forEach((input, i) => {
    if (input.invoiceLineId !== undefined && !ids.has(input.invoiceLineId)) {
      errors.push({
        path: `lineItems.${i}.invoiceLineId`,
        message: `invoice ${invoice.id} has no line ${input.invoiceLineId}`,
      });
    }
  });
  if (errors.length) throw new ValidationError(errors);
}

const must = (result: ReturnType<typeof parseMoney>): bigint => {
  if (!result.ok) throw new Error(`unvalidated decimal: ${result.reason}`);
  return result.value;
};

/**
 * The credit note's lines, and what of each invoice line is credited once it is issued. A line of
 * the invoice is credited at its own price, rate and category, for the quantity given or, absent,
 * all that is left of it; asking for more than is left is credit_exceeds_invoice. No lines given:
 * every line of the invoice with something left. A credited part of a line never takes more of
 * its amount or tax than is left (line-caps.ts): `taxes` is each line's tax, in order.
 */
function creditLines(
  invoice: InvoiceItem,
  inputs: CreditNoteLineInput[] | undefined,
): {
  lines: CreditNoteLineItem[];
  taxes: bigint[];
  quantities: Record<string, string>;
  lineTotals: Record<string, { amount: string; tax: string }>;
} {
  const credited = new Map<number, bigint>(
    Object.entries(invoice.creditedQuantities ?? {}).map(([id, q]) => [Number(id), must(parseQuantity(q))]),
  );
  const creditedMoney = creditedSoFar(invoice);
  const taxes: bigint[] = [];
  const byId = new Map(invoice.lineItems.map((line) => [line.id, line]));
  const requested: CreditNoteLineInput[] =
    inputs ??
    invoice.lineItems
      .filter((line) => must(parseQuantity(line.quantity)) > (credited.get(line.id) ?? 0n))
      .map((line) => ({ invoiceLineId: line.id }));

  const lines = requested.map((input, index): CreditNoteLineItem => {
    if (input.invoiceLineId !== undefined) {
      const line = byId.get(input.invoiceLineId)!;
      const done = credited.get(line.id) ?? 0n;
      const left = must(parseQuantity(line.quantity)) - done;
      const quantity = input.quantity === undefined ? left : must(parseQuantity(input.quantity));
      if (quantity > left || quantity <= 0n) {
        throw exceeds(
          `line ${line.id} of invoice ${invoice.id} has ${formatQuantity(left > 0n ? left : 0n)} left to credit ` +
            `(of ${line.quantity})` +
            (input.quantity === undefined ? "" : `, not ${formatQuantity(quantity)}`),
        );
      }
      credited.set(line.id, done + quantity);
      const before = creditedMoney.get(line.id) ?? { amount: 0n, tax: 0n };
      const last = done + quantity === must(parseQuantity(line.quantity));
      const part = linePart(line, quantity, before, last);
      creditedMoney.set(line.id, { amount: before.amount + part.amount, tax: before.tax + part.tax });
      taxes.push(part.tax);
      return {
        id: index + 1,
        invoiceLineId: line.id,
        description: line.description,
        quantity: formatQuantity(quantity),
        unitPrice: line.unitPrice,
        taxRate: line.taxRate,
        taxCategory: line.taxCategory ?? defaultTaxCategory(must(parseTaxRate(line.taxRate))),
        amount: formatMoney(part.amount),
        sortOrder: index,
      };
    }
    const quantity = must(parseQuantity(input.quantity ?? "1"));
    const unitPrice = must(parseMoney(input.unitPrice));
    const taxRate = must(parseTaxRate(input.taxRate ?? "0"));
    taxes.push(lineTax(lineAmount(quantity, unitPrice), taxRate));
    return {
      id: index + 1,
      invoiceLineId: null,
      description: input.description!,
      quantity: formatQuantity(quantity),
      unitPrice: formatMoney(unitPrice),
      taxRate: formatTaxRate(taxRate),
      taxCategory: input.taxCategory ?? defaultTaxCategory(taxRate),
      amount: formatMoney(lineAmount(quantity, unitPrice)),
      sortOrder: index,
    };
  });
  const quantities = Object.fromEntries([...credited].map(([id, q]) => [String(id), formatQuantity(q)]));
  return { lines, taxes, quantities, lineTotals: storedLineTotals(creditedMoney) };
}

function newCreditNoteItem(
  ctx: Ctx,
  invoice: InvoiceItem,
  number: number,
  { lines, taxes }: { lines: CreditNoteLineItem[]; taxes: bigint[] },
  input: CreditNoteInput,
  now: string,
  amounts: { applied: string; refund: string },
): CreditNoteItem {
  const key = creditNoteKey(ctx.userId, number);
  return {
    ...key,
    type: "credit_note",
    userId: ctx.userId,
    version: 1,
    gsi1pk: creditNotesOfInvoicePartition(ctx.userId, invoice.id),
    gsi1sk: pad(number),
    gsi2pk: creditNotesOfClientPartition(ctx.userId, invoice.clientId),
    gsi2sk: pad(number),
    id: number,
    invoiceId: invoice.id,
    invoiceNumber: invoice.invoiceNumber!,
    creditNoteNumber: formatCreditNoteNumber(number),
    status: "issued",
    reason: input.reason ?? null,
    memo: input.memo ?? null,
    currency: invoice.currency,
    issueDate: now,
    lineItems: lines,
    ...computeTotals(lines, taxes),
    taxBreakdown: taxBreakdown(lines, taxes),
    taxExemptionReason: invoice.taxExemptionReason ?? null,
    amountAppliedToDue: amounts.applied,
    amountToRefund: amounts.refund,
    clientId: invoice.clientId,
    clientName: invoice.clientName,
    clientEmail: invoice.clientEmail ?? null,
    clientAddress: invoice.clientAddress ?? null,
    clientTaxId: invoice.clientTaxId ?? null,
    seller: invoice.seller ?? null,
    publicToken: newPublicToken(),
    sentAt: null,
    peppolDelivery: null,
    createdAt: now,
  };
}

const exceeds = (detail: string) => new DomainError("credit_exceeds_invoice", detail);
const emptyCreditNote = (detail: string) => new DomainError("empty_credit_note", detail);

// ---- send ----

const SEND_RULES: SendRules<CreditNoteItem & { clientEmail: string | null }> = {
  kind: "CREDITNOTE",
  noun: "credit note",
  // A credit note stays issued, and may be sent again (to the same or another recipient).
  from: "issued",
  to: "issued",
  // The email names the invoice with its date, as the PDF and page do: read from the invoice (an
  // issued invoice's date never changes, and it is never deleted).
  email: async (ctx, note, to) => creditNoteEmail(ctx, note, to, await invoiceIssueDate(ctx, note)),
};

async function invoiceIssueDate(ctx: Ctx, note: CreditNoteItem): Promise<string | null> {
  const found = await ctx.db.doc.send(
    new GetCommand({ TableName: ctx.db.table, Key: invoiceKey(ctx.userId, note.invoiceId) }),
  );
  return (found.Item?.issueDate as string | undefined) ?? null;
}

/**
 * POST /credit-notes/{id}/send: emails the credit note with its PDF attached (documents/send.ts,
 * the send of invoices and estimates: recipient `to`, else the client's email on it, else the
 * client's current one; the email quota counted in the same transaction); sets sentAt.
 */
export const sendCreditNote = (ctx: Ctx, id: number, options: SendOptions = {}): Promise<CreditNoteItem> =>
  sendDocument(ctx, SEND_RULES, id, options.to, options.peppol);
