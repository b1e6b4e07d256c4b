import { createHash } from "node:crypto";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { Deps } from "../deps";
import { commit, type Write } from "../db/commit";
import { dueItems } from "../db/due";
import { dueKeys, entityKey, onDueList, pad, stillOnDueList, userPk } from "../db/keys";
import type { JobOptions, JobResult } from "../job";
import type { RecordKey } from "../capabilities/work-queue";
import { dueWorker } from "../queue/due-worker";
import { errorName, log } from "../observability/context-log";
import {
  type PeppolDocumentKind,
  type PeppolDocumentType,
  PeppolProviderRefused,
  PeppolProviderUnavailable,
} from "../capabilities/peppol-provider";
import { findRegistration } from "./registration";

/**
 * Peppol delivery (API.md section 19): a document sent with `channel: "peppol"` gets
 * `peppolDelivery` (pending) and, in the same transaction, a delivery record (sk
 * PEPPOL#<INVOICE|CREDITNOTE>#<id>) on the `peppol` due list. The hand-over to the provider never
 * runs in the request: when the record appears, the stream subscriber hands it to the `peppol` work
 * queue, whose worker (peppolWorker below) makes the first attempt; the `peppol` job (deployed every
 * 5 minutes, infra/jobs.ts) makes the ones that are due — retries after a failed hand-over (the
 * provider unreachable or 5xx) with backoff for 24 hours, a first hand-over the queue did not make,
 * and the polls of the provider's delivery evidence until the outcome is known. The outcome goes on the document
 * (`peppolDelivery.status` delivered or failed, with the provider's reason), whose stream change
 * gives `invoice.peppol_delivered|peppol_failed` (`credit_note.…` for a credit note).
 */
export interface PeppolDelivery {
  status: "pending" | "delivered" | "failed";
  providerReference: string | null;
  error: string | null;
  updatedAt: string;
}

interface DeliveryItem {
  pk: string;
  sk: string;
  userId: string;
  kind: PeppolDocumentKind;
  documentId: number;
  receiver: string;
  /** When the document was sent: retries and polls end 24 hours later. */
  since: string;
  stage: "handover" | "outcome";
  attempts: number;
  providerReference: string | null;
  duePk: string;
  dueSk: string;
}

const GIVE_UP_AFTER_MS = 24 * 60 * 60 * 1000;
/** Waits before the next attempt or poll: 1 min, 5 min, 30 min, 2 h, then every 6 h (within the 24 h). */
const BACKOFF_MS = [60_000, 5 * 60_000, 30 * 60_000, 2 * 3600_000, 6 * 3600_000];

const deliveryKey = (userId: string, kind: PeppolDocumentKind, id: number) => ({
  pk: userPk(userId),
  sk: `PEPPOL#${kind}#${pad(id)}`,
});

/**
 * What a Peppol send adds to its transaction: the document's `peppolDelivery` (pending) and the
 * delivery record, due at once. A repeated send (a credit note) starts a new delivery.
 */
export function peppolSendWrites(
  userId: string,
  kind: PeppolDocumentKind,
  documentId: number,
  receiver: string,
  now: string,
  table: string,
): { delivery: PeppolDelivery; write: Write } {
  const key = deliveryKey(userId, kind, documentId);
  const item: DeliveryItem = {
    ...key,
    userId,
    kind,
    documentId,
    receiver,
    since: now,
    stage: "handover",
    attempts: 0,
    providerReference: null,
    ...dueKeys("peppol", userId, key.sk, now),
  };
  return {
    delivery: { status: "pending", providerReference: null, error: null, updatedAt: now },
    write: { op: { Put: { TableName: table, Item: item } } },
  };
}

/** The `peppol` job: every due hand-over and poll. */
export async function runPeppolJob(deps: Deps, now: Date, options: JobOptions = {}): Promise<JobResult> {
  const at = now.toISOString();
  let changed = 0;
  for await (const key of dueItems(deps.db, "peppol", at)) {
    if (options.deadline && Date.now() > options.deadline) break;
    const item = await readDelivery(deps, { pk: String(key.pk), sk: String(key.sk) });
    if (!item?.duePk) continue; // taken off the list meanwhile (another runner's step)
    try {
      if (await processDelivery(deps, item, now)) changed++;
    } catch (error) {
      log("warn", "Peppol delivery step failed; it stays due", { delivery: item.sk, error: errorName(error) });
    }
  }
  return { job: "peppol", now: at, changed };
}

/** The delivery record itself: the byDue index projects keys only (db/table-definition.ts). */
async function readDelivery(deps: Deps, key: RecordKey): Promise<DeliveryItem | undefined> {
  const { Item } = await deps.db.doc.send(
    new GetCommand({ TableName: deps.db.table, Key: { pk: key.pk, sk: key.sk }, ConsistentRead: true }),
  );
  return Item as DeliveryItem | undefined;
}

/**
 * The `peppol` queue's worker: a send's first hand-over, one delivery record per message (the stream
 * subscriber sends one when the record appears). It acts only on a record still waiting for its
 * first hand-over (stage handover, no attempt made): one handed over already (a message given
 * twice) or waiting for a retry's time is the job's, and is `skipped`. A worker killed between the
 * provider's answer and its own write leaves the record as it was: the message comes again (or the
 * job finds it due) and hands over again with the same idempotency key, one document at the
 * provider. An error that is not the provider's (the table unreachable) gives the message back to
 * the queue (queue/due-worker.ts); the record stays due for the job meanwhile.
 */
export const peppolWorker = dueWorker(
  "peppol",
  async (deps, key) => {
    const item = await readDelivery(deps, key);
    if (!item?.duePk || item.stage !== "handover" || item.attempts !== 0) return "skipped";
    return (await processDelivery(deps, item, deps.clock())) ? "changed" : "unchanged";
  },
  () => undefined,
);

/**
 * One step of a delivery: the hand-over, or a poll of the outcome. Returns whether it changed
 * anything. Each step's writes are conditioned on the record being as read (its dueSk), so two
 * runners (the queue's worker and the job) never both record a step; a hand-over repeated by a lost
 * race is one submission at the provider (the idempotency key is the delivery's own). The provider's
 * answers are handled here; any other error (the table) is the caller's.
 */
async function processDelivery(deps: Deps, item: DeliveryItem, now: Date): Promise<boolean> {
  const provider = deps.peppol;
  const writeUbl = deps.peppolUbl;
  if (!provider || !writeUbl) return false; // stays due until a runner that can hand over
  const documentType: PeppolDocumentType = item.kind === "INVOICE" ? "invoice" : "credit_note";
  try {
    if (item.stage === "handover") {
      const registration = await findRegistration({ db: deps.db, userId: item.userId });
      if (!registration)
        return await finish(deps, item, now, "failed", "the business is no longer registered on Peppol");
      const ubl = await writeUbl(deps.db, item.userId, item.kind, item.documentId);
      const { reference } = await provider.submit({
        sender: registration.providerReference,
        receiverPeppolId: item.receiver,
        documentType,
        ubl,
        idempotencyKey: guidOf(`${item.userId}#${item.sk}#${item.since}`),
      });
      return await submitted(deps, item, now, reference);
    }
    const outcome = await provider.outcome(item.providerReference!);
    if (outcome.status === "delivered") return await finish(deps, item, now, "delivered", null);
    if (outcome.status === "failed") return await finish(deps, item, now, "failed", outcome.error);
    return await later(deps, item, now, "no delivery evidence from the access point provider within 24 hours");
  } catch (error) {
    if (error instanceof PeppolProviderRefused) return finish(deps, item, now, "failed", error.message);
    if (error instanceof PeppolProviderUnavailable) {
      log("warn", "Peppol provider unavailable; the delivery is tried again", {
        userId: item.userId,
        delivery: item.sk,
        error: error.message,
      });
      return later(deps, item, now, "the Peppol access point provider could not be reached for 24 hours");
    }
    throw error;
  }
}

/** The record as read (its due-list entry), or nothing changes (another runner took this step). */
const asRead = (table: string, item: DeliveryItem) => {
  // Its own placeholders: the same write may put the record on the list again (onDueList's).
  const seen = stillOnDueList(item);
  const renamed = (name: string) => name.replace(/:due/g, ":seenDue");
  return {
    TableName: table,
    Key: { pk: item.pk, sk: item.sk },
    ConditionExpression: renamed(seen.condition),
    seenValues: Object.fromEntries(Object.entries(seen.values).map(([k, v]) => [renamed(k), v])),
  };
};

/**
 * The document's `peppolDelivery`, with a version bump (its ETag changes; the stream sees it). Once
 * delivered, also `peppolDeliveredTo`: the receiver this delivery went to, which its page and PDF
 * print ("Sent via Peppol to …", documents/view.ts), so a later edit of the client's `peppolId`
 * does not change what the document says was done.
 */
function documentWrite(deps: Deps, item: DeliveryItem, delivery: PeppolDelivery): Write {
  const delivered = delivery.status === "delivered";
  return {
    op: {
      Update: {
        TableName: deps.db.table,
        Key: entityKey(item.userId, item.kind, item.documentId),
        UpdateExpression: `SET peppolDelivery = :d, #version = #version + :one${delivered ? ", peppolDeliveredTo = :to" : ""}`,
        ConditionExpression: "attribute_exists(pk)",
        ExpressionAttributeNames: { "#version": "version" },
        ExpressionAttributeValues: { ":d": delivery, ":one": 1, ...(delivered ? { ":to": item.receiver } : {}) },
      },
    },
  };
}

/** The delivery record moved on the due list to `next`, with more `set` clauses, as read or not at all. */
function moved(deps: Deps, item: DeliveryItem, next: Date, set: string, values: Record<string, unknown>): Write {
  const { seenValues, ...read } = asRead(deps.db.table, item);
  const due = onDueList("peppol", item.userId, item.sk, next.toISOString());
  return {
    op: {
      Update: {
        ...read,
        UpdateExpression: `SET ${set}, ${due.set}`,
        ExpressionAttributeValues: { ...seenValues, ...due.values, ...values },
      },
    },
  };
}

async function submitted(deps: Deps, item: DeliveryItem, now: Date, reference: string): Promise<boolean> {
  const next = new Date(now.getTime() + BACKOFF_MS[0]!);
  return step(deps, [
    moved(deps, item, next, "stage = :s, providerReference = :r, attempts = :zero", {
      ":s": "outcome",
      ":r": reference,
      ":zero": 0,
    }),
    documentWrite(deps, item, {
      status: "pending",
      providerReference: reference,
      error: null,
      updatedAt: now.toISOString(),
    }),
  ]);
}

/** Not done yet (a retry after an outage, or a poll without evidence): again later, or failed after 24 hours. */
async function later(deps: Deps, item: DeliveryItem, now: Date, giveUpReason: string): Promise<boolean> {
  if (now.getTime() - Date.parse(item.since) >= GIVE_UP_AFTER_MS)
    return finish(deps, item, now, "failed", giveUpReason);
  const wait = BACKOFF_MS[Math.min(item.attempts, BACKOFF_MS.length - 1)]!;
  return step(deps, [moved(deps, item, new Date(now.getTime() + wait), "attempts = attempts + :one", { ":one": 1 })]);
}

async function finish(
  deps: Deps,
  item: DeliveryItem,
  now: Date,
  status: "delivered" | "failed",
  error: string | null,
): Promise<boolean> {
  return step(deps, [
    {
      op: {
        Delete: (({ seenValues, ...read }) => ({ ...read, ExpressionAttributeValues: seenValues }))(
          asRead(deps.db.table, item),
        ),
      },
    },
    documentWrite(deps, item, {
      status,
      providerReference: item.providerReference,
      error: error ? error.slice(0, 500) : null,
      updatedAt: now.toISOString(),
    }),
  ]);
}

/** One step's writes in one transaction; a lost race (another runner's step) changes nothing. */
async function step(deps: Deps, writes: Write[]): Promise<boolean> {
  try {
    await commit({ db: deps.db }, writes);
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

const isConditionFailure = (error: unknown): boolean =>
  error instanceof Error &&
  (error.name === "ConditionalCheckFailedException" ||
    error.name === "TransactionCanceledException" ||
    /condition/i.test(error.message));

/** A GUID (Storecove asks for one as idempotency key) derived from the delivery, so a repeat is the same. */
function guidOf(text: string): string {
  const h = createHash("sha256").update(text).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
