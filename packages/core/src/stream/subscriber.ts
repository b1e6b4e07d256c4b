import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import type { Deps } from "../deps";
import { nowIso } from "../deps";
import { commit } from "../db/commit";
import { outboxWorker, type OutboxItem } from "../email/outbox";
import { deriveEvents, kindOf, type StreamChange } from "./derive";
import { EventAlreadyStored, eventItem, putEvent, toEvent } from "../events/store";
import { firstAttempts, putAttempt } from "../webhooks/deliveries";
import { webhooksWorker } from "../webhooks/webhooks-job";
import { batches, batchesByUser } from "../queue/dispatch";
import { enqueue } from "../queue/in-process";
import type { QueueName, WorkMessage, Worker } from "../queue/port";
import type { Event } from "../events/resource";
import type { InvoiceItem } from "../invoices/model";
import { checkoutExpiryWorker, endedSession } from "../public/checkout";
import { listEndpoints, type WebhookEndpointItem } from "../webhooks/endpoints";
import { errorFields, log } from "../observability/context-log";
import { METRIC } from "../observability/metric-names";
import { countMetric } from "../observability/metrics";
import { countChange } from "../reports/stream";
import { peppolWorker } from "../peppol/delivery";

/**
 * The table's change-stream subscriber: the one handler the Lambda (functions/src/lambda/stream.ts) and
 * `npm start` (packages/local/src/stream-reader.ts) run on each batch of stream records.
 *
 * It does, in stream order, only what must stay in order; whatever can wait goes to a queue with its
 * own workers (queue/port.ts), so no receiver, SES or the card processor holds a shard. For each record:
 * - every event it means (stream/derive.ts) is stored with its first webhook attempts in ONE
 *   transaction whose event put is conditional: a record delivered again stores nothing new (its
 *   events and their attempts exist already); the events are then put on the bus (deployed), up to
 *   10 per PutEvents call;
 * - an email outbox record's insert is handed to the `outbox` queue, and a Peppol delivery record's
 *   insert (a send with `channel: "peppol"`) to the `peppol` queue, whose worker makes the first
 *   hand-over to the access point provider (peppol/delivery.ts);
 * - an invoice, payment or credit note change that moves a report figure updates the monthly
 *   aggregates (reports/stream.ts), once per version of the record, however often it comes;
 * - an invoice change that ends its checkout session (void, paid, a new session for a new amount
 *   due) is handed to the `checkout-expiry` queue, whose worker expires the session at the card
 *   processor (public/checkout.ts).
 * A record that fails stops the batch there: the records before it are done, and it and those after
 * it are reported as failed (`failedSequenceNumber`), so the stream gives them again — nothing is
 * lost, and nothing already stored is doubled. The bus is at least once: a retried record puts its
 * events again (consumers dedupe by event id).
 *
 * After the batch: the first webhook attempts (one message per endpoint, in stream order, a user's
 * endpoints in one batch) go to the `webhooks` queue. The hand-offs never fail the batch: whatever a failed send
 * leaves is on the byDue list for the `webhooks` job, the outbox sweep and the `peppol` job.
 */
export interface StreamRecord {
  eventID?: string;
  eventName?: "INSERT" | "MODIFY" | "REMOVE" | string;
  /** Set on DynamoDB's own changes (a TTL deletion: principalId "dynamodb.amazonaws.com"). */
  userIdentity?: { type?: string; principalId?: string };
  dynamodb?: {
    Keys?: Record<string, AttributeValue>;
    NewImage?: Record<string, AttributeValue>;
    OldImage?: Record<string, AttributeValue>;
    SequenceNumber?: string;
    /** Epoch seconds, as Lambda's DynamoDB Streams event gives it. */
    ApproximateCreationDateTime?: number;
  };
}

export interface BatchOutcome {
  /** The sequence number of the first record that failed, when one did. */
  failedSequenceNumber?: string;
  events: number;
  /** Work handed to the queues' workers (queue/port.ts); `deferred`: first attempts left to the webhooks job. */
  handedOff: { emails: number; attempts: number; expiries: number; peppol: number; deferred: number };
}

/**
 * Deployed, the batch stops taking records when less than this is left of the Lambda's time: what
 * remains is reported failed from there and comes again in the next invocation (ReportBatchItemFailures),
 * instead of the function being killed mid-record and the whole batch coming again. A record's work
 * is now only DynamoDB writes and queue sends (each bounded by the SDK's timeouts,
 * db/dynamodb.ts), and the events' PutEvents; this leaves time for the last record and the sends.
 */
export const STOP_TAKING_RECORDS_MS = 30_000;

interface BatchOptions {
  /** The Lambda's remaining time (context.getRemainingTimeInMillis); unbounded when absent (locally). */
  remainingMs?: () => number;
}

/** Events waiting for one PutEvents call, with the position of the record they came from. */
interface BusEntry {
  event: Event;
  position: number;
}

export async function handleStreamBatch(
  deps: Deps,
  records: readonly StreamRecord[],
  options: BatchOptions = {},
): Promise<BatchOutcome> {
  const endpointsByUser = new Map<string, Promise<WebhookEndpointItem[]>>();
  const endpointsOf = (userId: string) => {
    let found = endpointsByUser.get(userId);
    if (!found) endpointsByUser.set(userId, (found = listEndpoints(deps, userId)));
    return found;
  };
  const now = nowIso(deps);
  const emails: WorkMessage[] = [];
  /** One message per endpoint: its first attempts of this batch, in stream order. */
  const attempts = new Map<string, WorkMessage>();
  const outcome: BatchOutcome = {
    events: 0,
    handedOff: { emails: 0, attempts: 0, expiries: 0, peppol: 0, deferred: 0 },
  };
  let bus: BusEntry[] = [];
  /** Puts the waiting events on the bus; false (and the batch fails from their first record) when it fails. */
  const flushBus = async (): Promise<boolean> => {
    if (!deps.eventBus || bus.length === 0) return true;
    const waiting = bus;
    bus = [];
    try {
      await deps.eventBus.publish(waiting.map((entry) => entry.event)); // 10 entries per PutEvents call
      return true;
    } catch (error) {
      const first = records[waiting[0]!.position];
      outcome.failedSequenceNumber = first?.dynamodb?.SequenceNumber;
      log("warn", "events not put on the bus; their records will be delivered again", {
        sequenceNumber: outcome.failedSequenceNumber,
        ...errorFields(error),
      });
      countMetric(METRIC.streamRecordsFailed);
      return false;
    }
  };
  /** Peppol sends whose first hand-over the `peppol` queue's worker makes (peppol/delivery.ts). */
  const handOvers: WorkMessage[] = [];

  for (const [position, record] of records.entries()) {
    if (position > 0 && options.remainingMs && options.remainingMs() < STOP_TAKING_RECORDS_MS) {
      outcome.failedSequenceNumber = record.dynamodb?.SequenceNumber;
      log("info", "stream batch stopped at the deadline; the rest comes again", {
        sequenceNumber: record.dynamodb?.SequenceNumber,
        left: records.length - position,
      });
      break;
    }
    try {
      const change = record.eventName as StreamChange;
      const before = image(record.dynamodb?.OldImage);
      const after = image(record.dynamodb?.NewImage);
      if (change === "INSERT" && after && typeof after.sk === "string" && after.sk.startsWith("OUTBOX#")) {
        const email = after as unknown as OutboxItem;
        emails.push({ queue: "outbox", now, userId: email.userId, keys: [{ pk: email.pk, sk: email.sk }] });
      }
      if (change === "INSERT" && after && typeof after.sk === "string" && after.sk.startsWith("PEPPOL#")) {
        const userId = String(after.pk).slice("USER#".length);
        handOvers.push({ queue: "peppol", now, userId, keys: [{ pk: String(after.pk), sk: after.sk }] });
      }
      const derived = deriveEvents(change, before, after);
      for (const [index, event] of derived.entries()) {
        const item = eventItem(originOf(record), index, event);
        const endpoints = await endpointsOf(event.userId);
        const first = firstAttempts(item, endpoints, now);
        // On the bus after it is stored, in one PutEvents call for up to 10 events: a record given
        // again puts its events again (the bus is at least once; consumers dedupe by event id).
        bus.push({ event: toEvent(item), position });
        try {
          await commit({ db: deps.db }, [putEvent(deps.db, item), ...first.map((a) => putAttempt(deps, a))]);
        } catch (error) {
          if (error instanceof EventAlreadyStored) continue;
          throw error;
        }
        outcome.events++;
        for (const attempt of first) {
          const endpoint = endpoints.find((e) => e.id === attempt.endpointId)!;
          // An endpoint already failing is left to the webhooks job: its timeouts would take a
          // worker that other endpoints' first attempts need.
          if (endpoint.failingSince) {
            outcome.handedOff.deferred++;
            continue;
          }
          const group = `${attempt.userId}#${attempt.endpointId}`;
          let message = attempts.get(group);
          if (!message) attempts.set(group, (message = { queue: "webhooks", now, userId: attempt.userId, keys: [] }));
          message.keys.push({ pk: attempt.pk, sk: attempt.sk });
        }
      }
      // After the events: a retried record finds them stored, and only the expiry is asked again.
      if (before && after && kindOf(after.pk, after.sk)?.resourceType === "invoice") {
        const userId = String(after.pk).slice("USER#".length);
        const expiry = endedSession(before as unknown as InvoiceItem, after as unknown as InvoiceItem);
        // Its own queue and worker (a card processor call); sent with the record, so a failed send
        // fails the record and the expiry is asked again.
        if (expiry) {
          await enqueue(
            deps,
            "checkout-expiry",
            [{ queue: "checkout-expiry", now, userId, keys: [], data: expiry }],
            checkoutExpiryWorker,
          );
          outcome.handedOff.expiries++;
        }
      }
      // The monthly reports' aggregates (reports/stream.ts): once per version of a counted record.
      await countChange(deps, change, before, after);
    } catch (error) {
      outcome.failedSequenceNumber = record.dynamodb?.SequenceNumber;
      log("warn", "stream record failed; it will be delivered again", {
        sequenceNumber: record.dynamodb?.SequenceNumber,
        ...errorFields(error),
      });
      countMetric(METRIC.streamRecordsFailed);
      // This record's events wait no more: it comes again. Those of the records before it go on the bus below.
      bus = bus.filter((entry) => entry.position < position);
      break;
    }
    if (bus.length >= 10 && !(await flushBus())) break;
  }
  // The events of every record taken (the failing one's excepted); should the bus fail, the batch
  // fails from the first record whose events it held.
  await flushBus();

  // The deliveries go to their queues' workers (queue/port.ts): the subscriber waits for no
  // receiver, SES or access point provider. A user's endpoints go in one batch (queue/dispatch.ts
  // batchesByUser). A send that fails is logged and costs nothing: the emails, attempts and Peppol
  // deliveries are on their due lists, where the outbox sweep, the webhooks job and the peppol job
  // find them.
  const handOffs: [QueueName, WorkMessage[], Worker][] = [
    ["outbox", emails, outboxWorker],
    ["webhooks", [...attempts.values()], webhooksWorker],
    ["peppol", handOvers, peppolWorker],
  ];
  for (const [queue, messages, worker] of handOffs) {
    try {
      const grouped = queue === "webhooks" ? batchesByUser(messages) : batches(messages);
      for (const batch of grouped) await enqueue(deps, queue, batch, worker);
      if (queue === "outbox") outcome.handedOff.emails += messages.length;
      else if (queue === "peppol") outcome.handedOff.peppol += messages.length;
      else outcome.handedOff.attempts += messages.reduce((n, m) => n + m.keys.length, 0);
    } catch (error) {
      log("warn", "hand-off to a queue failed; the due list keeps the work", { queue, ...errorFields(error) });
    }
  }
  return outcome;
}

function image(raw: Record<string, AttributeValue> | undefined): Record<string, unknown> | undefined {
  return raw ? unmarshall(raw) : undefined;
}

function originOf(record: StreamRecord) {
  const sequenceNumber = record.dynamodb?.SequenceNumber;
  const seconds = record.dynamodb?.ApproximateCreationDateTime;
  if (!sequenceNumber || typeof seconds !== "number") throw new Error("stream record without sequence number or time");
  return {
    eventId: record.eventID ?? sequenceNumber,
    sequenceNumber,
    createdAt: new Date(seconds * 1000).toISOString(),
  };
}
