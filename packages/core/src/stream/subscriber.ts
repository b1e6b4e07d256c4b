import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import type { Deps } from "../context";
import { nowIso } from "../context";
import { commit } from "../db/commit";
import { deliverQueued, type OutboxItem } from "../email/outbox";
import { deriveEvents, kindOf, type StreamChange } from "./derive";
import { EventAlreadyStored, eventItem, putEvent, toEvent, type EventItem } from "../events/store";
import { ATTEMPT_LIMITS, firstAttempts, putAttempt, runAttempt, type AttemptItem } from "../webhooks/deliveries";
import { attemptFairly } from "../webhooks/fairness";
import { withConcurrency } from "../concurrency";
import type { InvoiceItem } from "../invoices/model";
import { expireEndedSession } from "../public/checkout";
import { listEndpoints, type WebhookEndpointItem } from "../webhooks/endpoints";
import { errorName, log } from "../observability/context-log";
import { METRIC } from "../observability/metric-names";
import { countMetric } from "../observability/metrics";
import { countChange } from "../reports/stream";

/**
 * The table's change-stream subscriber: the one handler the Lambda (functions/src/lambda/stream.ts) and
 * `npm start` (packages/local/src/stream-reader.ts) run on each batch of stream records.
 *
 * For each record, in stream order:
 * - every event it means (stream/derive.ts) is published on the bus (deployed), then stored with
 *   its first webhook attempts in ONE transaction whose event put is conditional: a record
 *   delivered again stores nothing new (its events and their attempts exist already);
 * - an email outbox record's insert is queued for delivery;
 * - an invoice, payment or credit note change that moves a report figure updates the monthly
 *   aggregates (reports/stream.ts), once per version of the record, however often it comes;
 * - an invoice change that ends its checkout session (void, paid, a new session for a new amount
 *   due) expires that session at the card processor (public/checkout.ts), so no request waits on
 *   the processor and the API function carries no card processor. Never fails the record for the
 *   processor: an outage is logged and given up, so it holds back no later record of the shard.
 * A record that fails stops the batch there: the records before it are done, and it and those after
 * it are reported as failed (`failedSequenceNumber`), so the stream gives them again — nothing is
 * lost, and nothing already stored is doubled. The bus is at least once: a retried record may
 * publish its events again (consumers dedupe by event id).
 *
 * After the batch: the first webhook attempts (in order per endpoint) and the email deliveries
 * run, a bounded number at a time, each with its own timeout. They never fail the batch: whatever they leave is on the byDue
 * list for the `webhooks` and `reminders` jobs.
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
  /** `deferred`: first attempts left to the webhooks job (their endpoint is failing). */
  attempts: { succeeded: number; failed: number; dropped: number; skipped: number; deferred: number };
  emails: number;
}

const EMAIL_CONCURRENCY = 4;

/**
 * Deployed, the batch stops taking records when less than this is left of the Lambda's time: what
 * remains is reported failed from there and comes again in the next invocation (ReportBatchItemFailures),
 * instead of the function being killed mid-record and the whole batch coming again. It leaves time
 * for the deliveries after the batch and for one more record's worst case (a checkout session
 * expiry, 6.5 s: payments/stripe.ts).
 */
export const STOP_TAKING_RECORDS_MS = 30_000;

interface BatchOptions {
  /** The Lambda's remaining time (context.getRemainingTimeInMillis); unbounded when absent (locally). */
  remainingMs?: () => number;
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
  const attempts: { item: AttemptItem; event: EventItem; endpoint: WebhookEndpointItem }[] = [];
  const emails: OutboxItem[] = [];
  const outcome: BatchOutcome = {
    events: 0,
    attempts: { succeeded: 0, failed: 0, dropped: 0, skipped: 0, deferred: 0 },
    emails: 0,
  };

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
        emails.push(after as unknown as OutboxItem);
      }
      const derived = deriveEvents(change, before, after);
      for (const [index, event] of derived.entries()) {
        const item = eventItem(originOf(record), index, event);
        const endpoints = await endpointsOf(event.userId);
        const first = firstAttempts(item, endpoints, nowIso(deps));
        if (deps.eventBus) await deps.eventBus.publish([toEvent(item)]);
        try {
          await commit({ db: deps.db }, [putEvent(deps.db, item), ...first.map((a) => putAttempt(deps, a))]);
        } catch (error) {
          if (error instanceof EventAlreadyStored) continue;
          throw error;
        }
        outcome.events++;
        for (const attempt of first) {
          const endpoint = endpoints.find((e) => e.id === attempt.endpointId)!;
          // An endpoint already failing is left to the webhooks job: its timeouts would hold this
          // batch, and with it the shard's next events and emails, for every user on the shard.
          if (endpoint.failingSince) outcome.attempts.deferred++;
          else attempts.push({ item: attempt, event: item, endpoint });
        }
      }
      // After the events: a retried record finds them stored, and only the expiry is asked again.
      if (before && after && kindOf(after.pk, after.sk)?.resourceType === "invoice") {
        const userId = String(after.pk).slice("USER#".length);
        await expireEndedSession(
          { ...deps, userId },
          before as unknown as InvoiceItem,
          after as unknown as InvoiceItem,
        );
      }
      // The monthly reports' aggregates (reports/stream.ts): once per version of a counted record.
      await countChange(deps, change, before, after);
    } catch (error) {
      outcome.failedSequenceNumber = record.dynamodb?.SequenceNumber;
      log("warn", "stream record failed; it will be delivered again", {
        sequenceNumber: record.dynamodb?.SequenceNumber,
        error: errorName(error),
      });
      countMetric(METRIC.streamRecordsFailed);
      break;
    }
  }

  // Per endpoint (a user's: endpoint ids are counted per user) one at a time, in stream order, so an
  // endpoint gets a batch's events in order; users take turns. After a failure an endpoint takes no
  // more: its other first attempts stay due for the webhooks job, so a dead receiver costs one
  // timeout per batch, not one per event, and cannot hold up other users (webhooks/fairness.ts).
  const known = new Map(attempts.map((a) => [a.item, a]));
  await Promise.all([
    attemptFairly(
      attempts.map((a) => a.item),
      ATTEMPT_LIMITS,
      async (item) => {
        const { event, endpoint } = known.get(item)!;
        const result = await runAttempt(deps, item, { event, endpoint });
        outcome.attempts[result]++;
        return result;
      },
    ),
    withConcurrency(emails, EMAIL_CONCURRENCY, "email delivery", async (email) => {
      if ((await deliverQueued(deps, email)) === "delivered") outcome.emails++;
    }),
  ]);
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
