import type { ClientItem } from "../clients/clients";
import type { Ctx } from "../deps";
import type { Write } from "../db/commit";
import { commit } from "../db/commit";
import { duePartitions, movedOnDueList, OFF_DUE_LIST, stillOnDueList, withIndexKeys } from "../db/keys";
import { optimistic, Raced } from "../db/optimistic";
import { copyLineItems } from "../documents/line-items";
import { DomainError } from "../errors";
import { findInvoice } from "../invoices/invoices";
import { finalizeInvoice, sendInvoice } from "../invoices/lifecycle";
import { createInvoiceWrites, invoiceKey, newDraftInvoice, type InvoiceItem } from "../invoices/model";
import { addDays } from "../time";
import { settle, type ScheduleItem } from "./model";

/**
 * Generating one occurrence of a schedule, and delivering it when the schedule auto-sends.
 *
 * Exactly once: the invoice's Put (with its client reference) and the schedule's advance are one
 * transaction, and the advance is conditioned on the schedule as read — its version, its occurrence
 * index and `active`. Two runs that read the same state race for the same condition; the loser's
 * whole transaction is cancelled, invoice included, so it can never produce a second invoice.
 */

export interface Occurrence {
  invoice: InvoiceItem;
  /** The schedule after this occurrence: counted, advanced, completed when it was the last. */
  schedule: ScheduleItem;
}

/**
 * The invoice of the schedule's next occurrence and the schedule after it. The invoice is dated at
 * the occurrence — not at the run — and due `paymentTermsDays` days later; the template is copied.
 */
export function buildOccurrence(
  ctx: Pick<Ctx, "userId">,
  schedule: ScheduleItem,
  client: ClientItem,
  invoiceId: number,
  now: string,
): Occurrence {
  const issueDate = schedule.nextRunAt;
  if (issueDate === null) throw new Error(`schedule ${schedule.id} has no next occurrence`);
  const invoice = newDraftInvoice(
    ctx,
    invoiceId,
    client,
    copyLineItems(schedule.lineItems),
    {
      currency: schedule.currency,
      notes: schedule.notes,
      terms: schedule.terms,
      taxExemptionReason: schedule.taxExemptionReason ?? null,
      buyerReference: schedule.buyerReference ?? null,
      purchaseOrderReference: schedule.purchaseOrderReference ?? null,
      issueDate,
      dueDate: addDays(issueDate, schedule.paymentTermsDays),
      recurringScheduleId: schedule.id,
    },
    now,
  );
  // Its delivery marker (below) follows from deliverAt, like every index attribute (db/keys.ts).
  const delivered = schedule.autoSend ? withIndexKeys({ ...invoice, deliverAt: issueDate }) : invoice;
  const next = settle({
    ...schedule,
    occurrencesGenerated: schedule.occurrencesGenerated + 1,
    nextOccurrence: schedule.nextOccurrence + 1,
    lastRunAt: issueDate,
    lastInvoiceId: invoiceId,
    updatedAt: now,
    version: schedule.version + 1,
  });
  return { invoice: delivered, schedule: next };
}

/** A generation lost to another run (or to a pause, cancel or edit in between): read again. */
export class GenerationRaced extends Error {
  constructor() {
    super("the schedule changed since it was read");
    this.name = "GenerationRaced";
  }
}

/** The job's writes of an occurrence: the invoice and the schedule's conditional advance. */
export function advanceWrites(ctx: Ctx, before: ScheduleItem, occurrence: Occurrence): Write[] {
  return [
    ...createInvoiceWrites(ctx, occurrence.invoice), // the invoice (never overwriting) + its client's reference

    {
      op: {
        Put: {
          TableName: ctx.db.table,
          Item: occurrence.schedule,
          ConditionExpression: "#version = :v AND nextOccurrence = :n AND #status = :active",
          ExpressionAttributeNames: { "#version": "version", "#status": "status" },
          ExpressionAttributeValues: { ":v": before.version, ":n": before.nextOccurrence, ":active": "active" },
        },
      },
      onConditionFailed: () => new GenerationRaced(),
    },
  ];
}

/*
 * Auto-send and crashes. Finalizing and sending are the invoice's own transitions (with their own
 * numbering transaction), so they cannot join the generation transaction. To make "generated ⇒
 * eventually sent" survive a crash in between, an auto-send invoice is written — atomically with its
 * generation — carrying a delivery marker: `deliverAt` = its issueDate, which puts it on the
 * recurring job's due list while it is a draft or finalized (db/keys.ts DUE_LISTS).
 * Every run of the job therefore sees a generated-but-undelivered invoice (it is due at once) and
 * finishes its delivery, whatever happened to the run that generated it, and even after the
 * schedule was completed or paused. The marker goes away by itself when the invoice is sent (send
 * puts the invoice on the overdue job's list instead), or is removed when delivery cannot proceed
 * (no recipient, a negative total) or the invoice left the path (voided, paid). Delivery is made
 * of conditional transitions, so concurrent runs delivering one invoice send it once.
 */
const RECURRING_PARTITIONS = new Set(duePartitions("recurring"));

const hasDeliveryMarker = (invoice: InvoiceItem): boolean =>
  invoice.duePk !== undefined && RECURRING_PARTITIONS.has(invoice.duePk);

/**
 * What delivering an auto-send invoice came to, as this caller did it:
 * - `sent`: this call sent it;
 * - `finalizedWithoutEmail`: finalized, but neither the invoice nor its client has an email address;
 * - `notFinalized`: left a draft because finalize refused it (a negative total);
 * - `waitingForQuota`: the user's email quota is used up; its marker moves to when the quota frees a
 *   place (deliverAt = the job's now + Retry-After), so no run reads it again before then, and the
 *   first run after sends it;
 * - `none`: nothing left to do here (delivered by a concurrent run, voided, deleted, …).
 */
export type DeliveryOutcome = "sent" | "finalizedWithoutEmail" | "notFinalized" | "waitingForQuota" | "none";

/**
 * Finalizes and sends an auto-send invoice that still carries its delivery marker: read → decide →
 * write through optimistic(), the finalize and the send inside one round (their own loops hand a
 * lost race to this one), and a concurrent delivery that moved the invoice first (422
 * invalid_transition) is a lost round: read again and see what is left to do.
 */
export function deliverInvoice(ctx: Ctx, invoiceId: number): Promise<DeliveryOutcome> {
  return optimistic(`invoice ${invoiceId}`, async () => {
    let invoice = await findInvoice(ctx, invoiceId, true);
    if (!invoice || !hasDeliveryMarker(invoice)) return "none";
    try {
      if (invoice.status === "draft") invoice = await finalizeInvoice(ctx, invoiceId);
      if (invoice.status === "finalized") {
        await sendInvoice(ctx, invoiceId);
        return "sent";
      }
      // Sent by hand, paid, voided …: there is nothing left to deliver.
      await removeDeliveryMarker(ctx, invoice);
      return "none";
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      if (error.code === "invalid_transition") throw new Raced();
      if (error.code === "email_quota_exceeded") {
        return (await moveDeliveryMarker(ctx, invoice, error.retryAfterSeconds ?? 3600)) ? "waitingForQuota" : "none";
      }
      if (error.code === "client_email_missing") {
        return (await removeDeliveryMarker(ctx, invoice)) ? "finalizedWithoutEmail" : "none";
      }
      if (error.code === "negative_total" || error.code === "empty_invoice") {
        return (await removeDeliveryMarker(ctx, invoice)) ? "notFinalized" : "none";
      }
      throw error;
    }
  });
}

/** Takes an invoice off the recurring due list; false when someone else already changed its entry. */
function removeDeliveryMarker(ctx: Ctx, invoice: InvoiceItem): Promise<boolean> {
  const seen = stillOnDueList(invoice);
  return updateMarker(ctx, invoice, `REMOVE deliverAt, ${OFF_DUE_LIST}`, seen.condition, seen.values);
}

/**
 * Moves an invoice's delivery marker to when its user's email quota allows (Retry-After from the
 * job's clock); false when someone else changed the entry meanwhile.
 */
function moveDeliveryMarker(ctx: Ctx, invoice: InvoiceItem, retryAfterSeconds: number): Promise<boolean> {
  const deliverAt = new Date(ctx.clock().getTime() + retryAfterSeconds * 1000).toISOString();
  // The entry withIndexKeys derives from that deliverAt (DUE_LISTS: the recurring list).
  const move = movedOnDueList("recurring", ctx.userId, invoiceKey(ctx.userId, invoice.id).sk, deliverAt, invoice);
  return updateMarker(ctx, invoice, `SET deliverAt = :at, ${move.set}`, move.condition, {
    ":at": deliverAt,
    ...move.values,
  });
}

/** One update of the invoice's delivery marker, conditioned on its entry as read; false when it changed meanwhile. */
async function updateMarker(
  ctx: Ctx,
  invoice: InvoiceItem,
  update: string,
  condition: string,
  values: Record<string, unknown>,
): Promise<boolean> {
  try {
    await commit({ db: ctx.db }, [
      {
        op: {
          Update: {
            TableName: ctx.db.table,
            Key: invoiceKey(ctx.userId, invoice.id),
            UpdateExpression: update,
            ConditionExpression: condition,
            ExpressionAttributeValues: values,
          },
        },
        onConditionFailed: () => new MarkerMoved(),
      },
    ]);
    return true;
  } catch (error) {
    if (error instanceof MarkerMoved) return false;
    throw error;
  }
}

class MarkerMoved extends Error {}
