import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { clientRefWrite, requireClient } from "../clients/clients";
import type { Ctx } from "../deps";
import { nowIso } from "../deps";
import { commit, type Write } from "../db/commit";
import { createTakingValues } from "../db/ids";
import { optimistic, Raced } from "../db/optimistic";
import { listEntities, type Page, type PageRequest } from "../db/pagination";
import { assertIfMatch, isEmptyPatch, putIfVersion } from "../db/versioning";
import { buildLineItems, computeTotals, nextLineId, type LineItemInput } from "../documents/line-items";
import { DomainError, ValidationError, invalidTransition, notFound, type FieldError } from "../errors";
import { createInvoiceWrites } from "../invoices/model";
import { startOfUtcDay } from "../time";
import { scheduleKey, settle, type ScheduleItem, type ScheduleStatus } from "./model";
import { withIndexKeys } from "../db/keys";
import { buildOccurrence, deliverInvoice } from "./occurrences";
import { firstOccurrenceAtOrAfter, type Frequency } from "./recurrence";

/**
 * Recurring schedules: create (with the first invoice when it is due at once),
 * read, list, edit the template, delete, and the pause / resume / cancel state machine:
 *   active ⇄ paused;  active | paused → cancelled;  active | paused → completed (by generation or edit).
 * The `recurring` job (recurring-job.ts) generates the later occurrences.
 */

interface ScheduleInput {
  clientId: number;
  frequency: Frequency;
  startDate?: string;
  endDate?: string | null;
  maxOccurrences?: number | null;
  autoSend?: boolean;
  paymentTermsDays?: number;
  currency?: string;
  notes?: string | null;
  terms?: string | null;
  taxExemptionReason?: string | null;
  buyerReference?: string | null;
  purchaseOrderReference?: string | null;
  lineItems: LineItemInput[];
}

type SchedulePatch = Partial<ScheduleInput>;

/**
 * Input rules that need the clock or two fields at once (the schema checks everything else): a
 * given startDate not before today (UTC), an endDate not before the start.
 */
function checkDates(
  given: { startDate?: string; endDate?: string | null },
  startDate: string | undefined,
  now: Date,
): FieldError[] {
  const errors: FieldError[] = [];
  if (given.startDate !== undefined && given.startDate < startOfUtcDay(now)) {
    errors.push({ path: "startDate", message: "must not be earlier than today (UTC)" });
  }
  if (startDate !== undefined && given.endDate != null && given.endDate < startDate) {
    errors.push({ path: "endDate", message: "must not be before startDate" });
  }
  return errors;
}

function throwIfAny(errors: FieldError[]): void {
  if (errors.length) throw new ValidationError(errors);
}

/**
 * POST /recurring-schedules. When startDate (given, or now when omitted) is not later than now, the
 * first invoice is generated in this very request — the schedule, the invoice and the client's
 * references (+2: one each) in ONE transaction, so the request's Idempotency-Key record joins it too
 * and a retry can never generate a second first invoice.
 */
export async function createSchedule(ctx: Ctx, input: ScheduleInput): Promise<ScheduleItem> {
  const clock = ctx.clock();
  const now = clock.toISOString();
  const startDate = input.startDate ?? now;
  throwIfAny(checkDates(input, startDate, clock));

  const lineItems = buildLineItems(input.lineItems, 1);
  const immediate = startDate <= now;
  // One read (the client, copied into the template, and the counters of the ids taken — on a
  // request's first read with the API key too), then one transaction (db/ids.ts).
  const first = await createTakingValues(ctx, "schedule id counter", async (_take, takeId) => {
    const [client, id, invoiceId] = await Promise.all([
      requireClient(ctx, input.clientId),
      takeId("schedule"),
      immediate ? takeId("invoice") : Promise.resolve(0),
    ]);
    const created = settle({
      ...scheduleKey(ctx.userId, id),
      userId: ctx.userId,
      version: 1,
      id,
      clientId: client.id,
      status: "active",
      frequency: input.frequency,
      startDate,
      endDate: input.endDate ?? null,
      maxOccurrences: input.maxOccurrences ?? null,
      occurrencesGenerated: 0,
      nextOccurrence: 0,
      nextRunAt: startDate,
      lastRunAt: null,
      lastInvoiceId: null,
      autoSend: input.autoSend ?? false,
      paymentTermsDays: input.paymentTermsDays ?? client.paymentTermsDays,
      currency: input.currency ?? client.currency,
      notes: input.notes ?? null,
      terms: input.terms ?? null,
      taxExemptionReason: input.taxExemptionReason ?? null,
      buyerReference: input.buyerReference ?? null,
      purchaseOrderReference: input.purchaseOrderReference ?? null,
      lineItems,
      nextLineId: nextLineId(lineItems),
      ...computeTotals(lineItems),
      createdAt: now,
      updatedAt: now,
      gsi1pk: "",
      gsi1sk: "",
      gsi2pk: "",
      gsi2sk: "", // set by settle → withIndexKeys
    });

    const putNew = (item: ScheduleItem): Write => ({
      op: { Put: { TableName: ctx.db.table, Item: item, ConditionExpression: "attribute_not_exists(pk)" } },
    });
    if (!immediate) return { writes: [putNew(created), clientRefWrite(ctx, client.id, 1)], result: created };
    const { invoice, schedule } = buildOccurrence(ctx, created, client, invoiceId, now);
    const withInvoice: ScheduleItem = { ...schedule, version: 1 };
    // The invoice's own Put, but one client-reference update for both documents (a transaction may
    // touch an item only once).
    const [invoicePut] = createInvoiceWrites(ctx, invoice);
    const writes = [putNew(withInvoice), invoicePut!, clientRefWrite(ctx, client.id, 2)];
    return { writes, result: withInvoice };
  });
  if (!immediate) return first;
  const invoiceId = first.lastInvoiceId!;
  // Delivery is not part of the creation (nor of its Idempotency-Key record): the schedule and its
  // first invoice exist now. If delivery is refused or the process dies here, the invoice's delivery
  // marker makes the next job run finish it (see occurrences.ts).
  if (first.autoSend) {
    try {
      await deliverInvoice({ ...ctx, commitHook: undefined }, invoiceId);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
    }
  }
  return first;
}

export async function findSchedule(ctx: Ctx, id: number, consistent = false): Promise<ScheduleItem | undefined> {
  const out = await ctx.db.doc.send(
    new GetCommand({ TableName: ctx.db.table, Key: scheduleKey(ctx.userId, id), ConsistentRead: consistent }),
  );
  return out.Item as ScheduleItem | undefined;
}

export async function getSchedule(ctx: Ctx, id: number, consistent = false): Promise<ScheduleItem> {
  const item = await findSchedule(ctx, id, consistent);
  if (!item) throw notFound("recurring schedule", id);
  return item;
}

export function listSchedules(
  ctx: Ctx,
  filters: { status?: ScheduleStatus; clientId?: number },
  page: PageRequest,
): Promise<Page<ScheduleItem>> {
  return listEntities<ScheduleItem>(ctx.db, ctx.userId, "SCHEDULE", filters, page);
}

/**
 * One change of a schedule: read it, compute the new item (or refuse), write it whole conditioned
 * on the version read. A lost race is read again and re-decided — so of two concurrent pauses one
 * succeeds and the other sees `paused` and refuses — except under If-Match, where it is 412.
 */
async function changeSchedule(
  ctx: Ctx,
  id: number,
  decide: (current: ScheduleItem) => Promise<{ next: ScheduleItem; writes?: Write[] } | undefined>,
  ifMatch?: string,
): Promise<ScheduleItem> {
  return optimistic(
    "schedule",
    async () => {
      const current = await getSchedule(ctx, id, true);
      assertIfMatch(ifMatch, current.version);
      const change = await decide(current);
      if (!change) return current;
      await commit(
        ctx,
        [
          {
            op: putIfVersion(ctx.db.table, change.next, current.version),
            onConditionFailed: (old) => (old ? new Raced() : notFound("recurring schedule", id)),
          },
          ...(change.writes ?? []),
        ],
        change.next,
      );
      return change.next;
    },
    { ifMatch },
  );
}

const bump = (ctx: Ctx, item: ScheduleItem): ScheduleItem => ({
  ...item,
  updatedAt: nowIso(ctx),
  version: item.version + 1,
});

const EDITABLE: readonly ScheduleStatus[] = ["active", "paused"];
/** What defines the occurrences (and whom they bill): fixed once the first invoice exists. */
const DEFINING = ["frequency", "startDate", "clientId"] as const;
const TEMPLATE = [
  "currency",
  "notes",
  "terms",
  "taxExemptionReason",
  "buyerReference",
  "purchaseOrderReference",
  "paymentTermsDays",
  "autoSend",
  "endDate",
  "maxOccurrences",
] as const;

const notEditable = (detail: string) => new DomainError("schedule_not_editable", detail);

/**
 * PATCH: the template at any time while active or paused; frequency, startDate and clientId only
 * before the first invoice (sending a field's current value is not a change). A new endDate or
 * maxOccurrences may end the schedule at once (completed). A new startDate or frequency restarts
 * the occurrence count at 0; a start that is already due is generated by the next job run.
 */
export async function updateSchedule(
  ctx: Ctx,
  id: number,
  patch: SchedulePatch,
  ifMatch?: string,
): Promise<ScheduleItem> {
  // What the body alone decides comes before any lookup (400 before 404).
  throwIfAny(checkDates(patch, patch.startDate, ctx.clock()));
  return changeSchedule(
    ctx,
    id,
    async (current) => {
      const startDate = patch.startDate ?? current.startDate;
      const endDate = patch.endDate === undefined ? current.endDate : patch.endDate;
      if (endDate !== null && endDate < startDate) {
        const path = patch.endDate === undefined ? "startDate" : "endDate";
        throw new ValidationError([{ path, message: "endDate must not be before startDate" }]);
      }
      if (!EDITABLE.includes(current.status))
        throw notEditable(`schedule ${id} is ${current.status}; only an active or paused schedule can be changed`);
      if (isEmptyPatch(patch)) return undefined;
      const redefined = DEFINING.filter((field) => patch[field] !== undefined && patch[field] !== current[field]);
      if (redefined.length && current.occurrencesGenerated > 0) {
        throw notEditable(`${redefined.join(", ")} cannot change after the schedule's first invoice`);
      }

      const next = bump(ctx, current);
      const writes: Write[] = [];
      if (patch.clientId !== undefined && patch.clientId !== current.clientId) {
        const client = await requireClient(ctx, patch.clientId);
        next.clientId = client.id;
        writes.push(clientRefWrite(ctx, client.id, 1), clientRefWrite(ctx, current.clientId, -1));
      }
      for (const field of TEMPLATE) {
        if (patch[field] !== undefined) (next as unknown as Record<string, unknown>)[field] = patch[field];
      }
      if (patch.lineItems !== undefined) {
        next.lineItems = buildLineItems(patch.lineItems, current.nextLineId);
        next.nextLineId = current.nextLineId + patch.lineItems.length;
        Object.assign(next, computeTotals(next.lineItems));
      }
      if (redefined.includes("startDate") || redefined.includes("frequency")) {
        next.startDate = startDate;
        next.frequency = patch.frequency ?? current.frequency;
        next.nextOccurrence = 0; // no invoice exists yet: occurrences count from the new anchor
      }
      return { next: settle(next), writes };
    },
    ifMatch,
  );
}

/** DELETE: any status; its invoices stay. The client reference goes in the same transaction. */
export async function deleteSchedule(ctx: Ctx, id: number): Promise<void> {
  await optimistic("schedule", async () => {
    const current = await getSchedule(ctx, id, true);
    await commit(ctx, [
      {
        op: {
          Delete: {
            TableName: ctx.db.table,
            Key: scheduleKey(ctx.userId, id),
            // On the version: a concurrent change of clientId would otherwise unbalance the count.
            ConditionExpression: "#version = :v",
            ExpressionAttributeNames: { "#version": "version" },
            ExpressionAttributeValues: { ":v": current.version },
          },
        },
        onConditionFailed: (old) => (old ? new Raced() : notFound("recurring schedule", id)),
      },
      clientRefWrite(ctx, current.clientId, -1),
    ]);
  });
}

const wrongState = (id: number, current: ScheduleItem, action: string) =>
  invalidTransition(`recurring schedule ${id}`, current.status, action);

/** active → paused: off the job's due list until resumed. */
export function pauseSchedule(ctx: Ctx, id: number): Promise<ScheduleItem> {
  return changeSchedule(ctx, id, async (current) => {
    if (current.status !== "active") throw wrongState(id, current, "pause");
    return { next: withIndexKeys({ ...bump(ctx, current), status: "paused" }) };
  });
}

/**
 * paused → active. Occurrences earlier than now are skipped — not generated, not counted — and the
 * schedule continues at the first occurrence at or after now (never before the one it was paused
 * at). It is completed instead when that occurrence is past endDate or the calendar.
 */
export function resumeSchedule(ctx: Ctx, id: number): Promise<ScheduleItem> {
  const now = nowIso(ctx);
  return changeSchedule(ctx, id, async (current) => {
    if (current.status !== "paused") throw wrongState(id, current, "resume");
    const next = { ...bump(ctx, current), status: "active" as const };
    const first = firstOccurrenceAtOrAfter(current.startDate, current.frequency, now);
    if (first === null) return { next: withIndexKeys({ ...next, status: "completed", nextRunAt: null }) };
    return { next: settle({ ...next, nextOccurrence: Math.max(current.nextOccurrence, first) }) };
  });
}

/** active | paused → cancelled: final; nextRunAt becomes null. */
export function cancelSchedule(ctx: Ctx, id: number): Promise<ScheduleItem> {
  return changeSchedule(ctx, id, async (current) => {
    if (!EDITABLE.includes(current.status)) throw wrongState(id, current, "cancel");
    return { next: withIndexKeys({ ...bump(ctx, current), status: "cancelled", nextRunAt: null }) };
  });
}
