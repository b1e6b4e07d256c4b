import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { GetCommand, QueryCommand, UpdateCommand, type QueryCommandOutput } from "@aws-sdk/lib-dynamodb";
import type { Ctx, Deps } from "../context";
import { nowIso } from "../context";
import { commit, type Write } from "../db/commit";
import { dueItems } from "../db/due";
import { DUE_SHARDS, dueKeys, dueOrder, isDueEntry, OFF_DUE_LIST, onDueList, pad, userPk } from "../db/keys";
import { DomainError, notFound } from "../errors";
import { EVENT_RETENTION_SECONDS, toEvent, type EventItem } from "../events/store";
import type { JobOptions, JobResult } from "../job";
import {
  endpointKey,
  findEndpoint,
  getEndpoint,
  signingSecrets,
  subscribes,
  type WebhookEndpointItem,
} from "./endpoints";
import { postWebhook } from "./post";
import { batches, inTurns } from "../queue/dispatch";
import { handOff, tallyOf } from "../queue/in-process";
import type { WorkMessage, Worker } from "../queue/port";
import { errorName, log } from "../observability/context-log";
import type { Delivery } from "./resource";
import { METRIC } from "../observability/metric-names";
import { countMetric } from "../observability/metrics";
import { attemptFairly, type AttemptResult, type FairLimits } from "./fairness";
import { signatureHeaders } from "./signing";

/**
 * Webhook deliveries (docs/events.md). Every attempt is one item, created `pending` on the byDue
 * list "webhooks" at the time it is due: the first in the very transaction that stores the event
 * (so an event never lacks its deliveries), each retry in the transaction that records the failed
 * attempt before it. The stream subscriber makes first attempts right away; the `webhooks` job makes
 * whatever is due, retries and first attempts a crash interrupted alike.
 *
 * At least once: an attempter CLAIMS the item (a conditional update on its claim count, which also
 * moves it on the due list to now + CLAIM_LEASE), posts, then records the outcome conditioned on its
 * own claim. An attempter that dies after claiming leaves the item due again when the lease ends, and
 * the job repeats the attempt: the receiver may then get the event twice and dedupes by webhook-id.
 */
const RETRY_DELAYS_MS = [60_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 6 * 3_600_000, 24 * 3_600_000];
const ATTEMPT_TIMEOUT_MS = 10_000;
/** Longer than an attempt can take, so a live attempter always records before anyone re-claims. */
const CLAIM_LEASE_MS = 2 * 60_000;
/**
 * An endpoint whose attempts have all failed for this long (none succeeded since the first failure
 * of the run) is disabled, with a `webhook_endpoint.disabled` event: Svix's five days; Stripe also
 * disables an endpoint that has failed for several days. Its owner enables it again with PATCH.
 */
const DISABLE_AFTER_MS = 5 * 86_400_000;
const SK_PREFIX = "WEBHOOK_ATTEMPT#";

type AttemptStatus = "pending" | "sending" | "succeeded" | "failed";

export interface AttemptItem {
  pk: string;
  sk: string;
  userId: string;
  endpointId: number;
  eventId: string;
  /** The event's own key (its sk), to read the body the attempt sends. */
  eventSk: string;
  type: string;
  attempt: number;
  status: AttemptStatus;
  claims: number;
  responseStatus: number | null;
  error: string | null;
  attemptedAt: string | null;
  /** Pending: when it is due. Failed: when the next attempt is due, null once given up. */
  nextAttemptAt: string | null;
  /** Asked for by the endpoint's owner or an operator (redeliver): one attempt, no automatic retries. */
  redelivery?: boolean;
  expiresAt: number;
  duePk?: string;
  dueSk?: string;
}

/** The public delivery attempt: its shape is the response schema (./resource.ts). */
export type { Delivery };

export const toDelivery = (item: AttemptItem): Delivery => ({
  eventId: item.eventId,
  type: item.type,
  attempt: item.attempt,
  status: item.status === "sending" ? "pending" : item.status,
  responseStatus: item.responseStatus ?? null,
  error: item.error ?? null,
  attemptedAt: item.attemptedAt ?? null,
  nextAttemptAt: item.nextAttemptAt ?? null,
});

const attemptsPrefix = (endpointId: number) => `${SK_PREFIX}${pad(endpointId)}#`;

/** A pending attempt of `event` to `endpointId`, due at `dueAt`. */
function pendingAttempt(event: EventItem, endpointId: number, attempt: number, dueAt: string): AttemptItem {
  const userId = event.pk.slice("USER#".length);
  const sk = `${attemptsPrefix(endpointId)}${dueAt}#${event.id}#${String(attempt).padStart(2, "0")}`;
  return {
    pk: userPk(userId),
    sk,
    ...dueKeys("webhooks", userId, sk, dueAt),
    userId,
    endpointId,
    eventId: event.id,
    eventSk: event.sk,
    type: event.type,
    attempt,
    status: "pending",
    claims: 0,
    responseStatus: null,
    error: null,
    attemptedAt: null,
    nextAttemptAt: dueAt,
    expiresAt: Math.floor(Date.parse(dueAt) / 1000) + EVENT_RETENTION_SECONDS,
  };
}

export const putAttempt = (deps: Pick<Deps, "db">, item: AttemptItem): Write => ({
  op: { Put: { TableName: deps.db.table, Item: item, ConditionExpression: "attribute_not_exists(pk)" } },
});

/** The first attempts an event needs: one per enabled endpoint of its user that subscribes to its type. */
export function firstAttempts(event: EventItem, endpoints: readonly WebhookEndpointItem[], now: string): AttemptItem[] {
  return endpoints.filter((e) => subscribes(e, event.type)).map((e) => pendingAttempt(event, e.id, 1, now));
}

/** The last 100 attempts to one endpoint, newest first. */
export async function listDeliveries(deps: Pick<Deps, "db">, userId: string, endpointId: number): Promise<Delivery[]> {
  const out = await deps.db.doc.send(
    new QueryCommand({
      TableName: deps.db.table,
      KeyConditionExpression: "pk = :p AND begins_with(sk, :s)",
      ExpressionAttributeValues: { ":p": userPk(userId), ":s": attemptsPrefix(endpointId) },
      ScanIndexForward: false,
      Limit: 100,
    }),
  );
  return ((out.Items ?? []) as AttemptItem[]).map(toDelivery);
}

type AttemptDeps = Pick<Deps, "db" | "clock" | "webhookPolicy">;

class ClaimLost extends Error {}

/**
 * Makes one attempt, if nobody else is making it: claim, POST, record (and queue the next attempt
 * after a failure). `event` and `endpoint` are passed when the caller has them (the subscriber),
 * else read. Returns the outcome, or "skipped" when the claim was lost.
 */
export async function runAttempt(
  deps: AttemptDeps,
  item: AttemptItem,
  known: { event?: EventItem; endpoint?: WebhookEndpointItem | null } = {},
): Promise<AttemptResult> {
  const now = nowIso(deps);
  const claims = item.claims + 1;
  const lease = new Date(Date.parse(now) + CLAIM_LEASE_MS).toISOString();
  try {
    await commit({ db: deps.db }, [
      {
        op: {
          Update: {
            TableName: deps.db.table,
            Key: { pk: item.pk, sk: item.sk },
            UpdateExpression: `SET #status = :sending, claims = :claims, ${onDueList("webhooks", item.userId, item.sk, lease).set}`,
            ConditionExpression: "claims = :seen AND #status IN (:pending, :sending)",
            ExpressionAttributeNames: { "#status": "status" },
            ExpressionAttributeValues: {
              ":sending": "sending",
              ":pending": "pending",
              ":claims": claims,
              ":seen": item.claims,
              ...onDueList("webhooks", item.userId, item.sk, lease).values,
            },
          },
        },
        onConditionFailed: () => new ClaimLost(),
      },
    ]);
  } catch (error) {
    if (error instanceof ClaimLost) return "skipped";
    throw error;
  }

  const endpoint =
    known.endpoint !== undefined ? known.endpoint : await findEndpoint(deps, item.userId, item.endpointId);
  const event = known.event ?? (await readEvent(deps, item));
  let outcome: { ok: boolean; responseStatus: number | null; error: string | null; final?: boolean };
  if (!endpoint) outcome = { ok: false, responseStatus: null, error: "the endpoint was deleted", final: true };
  else if (!event) outcome = { ok: false, responseStatus: null, error: "the event has expired", final: true };
  else if (!endpoint.enabled)
    outcome = { ok: false, responseStatus: null, error: "the endpoint is disabled", final: true };
  else {
    const body = JSON.stringify(toEvent(event));
    // The timestamp is the wall clock's, whatever "now" a job runs as: receivers reject old ones.
    const headers = signatureHeaders(signingSecrets(endpoint, now), event.id, Math.floor(Date.now() / 1000), body);
    const policy = deps.webhookPolicy ?? { allowPrivate: false };
    outcome = await postWebhook(endpoint.url, headers, body, {
      ...policy,
      timeoutMs: policy.timeoutMs ?? ATTEMPT_TIMEOUT_MS,
    });
  }
  await record(deps, item, claims, now, outcome);
  if (endpoint?.enabled && !outcome.final) await trackHealth(deps, endpoint, outcome.ok, now);
  if (outcome.ok) return "succeeded";
  if (outcome.final) return "dropped";
  countMetric(METRIC.webhookAttemptsFailed);
  return "failed";
}

/**
 * The endpoint's run of failures: its start is noted at the first failure after a success, cleared
 * by the next success, and a failure DISABLE_AFTER_MS after that start disables the endpoint.
 * Written apart from the attempt (best effort, each write conditioned on what was read): losing a
 * race with another attempter or the owner's PATCH only delays the decision to a later attempt.
 */
async function trackHealth(deps: AttemptDeps, endpoint: WebhookEndpointItem, ok: boolean, now: string): Promise<void> {
  const key = endpointKey(endpoint.userId, endpoint.id);
  const since = endpoint.failingSince;
  let update: { UpdateExpression: string; ConditionExpression: string; values: Record<string, unknown> } | undefined;
  if (ok && since)
    update = { UpdateExpression: "REMOVE failingSince", ConditionExpression: "failingSince = :since", values: {} };
  else if (!ok && !since)
    update = {
      UpdateExpression: "SET failingSince = :now",
      ConditionExpression: "attribute_exists(pk) AND enabled = :true AND attribute_not_exists(failingSince)",
      values: { ":now": now, ":true": true },
    };
  else if (!ok && since && Date.parse(now) - Date.parse(since) >= DISABLE_AFTER_MS)
    update = {
      UpdateExpression:
        "SET enabled = :false, disabledBy = :failures, updatedAt = :now ADD version :one REMOVE failingSince",
      ConditionExpression: "enabled = :true AND failingSince = :since",
      values: { ":false": false, ":true": true, ":failures": "failures", ":now": now, ":one": 1 },
    };
  if (!update) return;
  try {
    await deps.db.doc.send(
      new UpdateCommand({
        TableName: deps.db.table,
        Key: key,
        UpdateExpression: update.UpdateExpression,
        ConditionExpression: update.ConditionExpression,
        ExpressionAttributeValues: { ...update.values, ...(since ? { ":since": since } : {}) },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

async function record(
  deps: AttemptDeps,
  item: AttemptItem,
  claims: number,
  now: string,
  outcome: { ok: boolean; responseStatus: number | null; error: string | null; final?: boolean },
): Promise<void> {
  const delay = outcome.ok || outcome.final || item.redelivery ? undefined : RETRY_DELAYS_MS[item.attempt - 1];
  const nextAt = delay === undefined ? null : new Date(Date.parse(now) + delay).toISOString();
  const writes: Write[] = [
    {
      op: {
        Update: {
          TableName: deps.db.table,
          Key: { pk: item.pk, sk: item.sk },
          UpdateExpression: `SET #status = :status, responseStatus = :rs, #error = :error, attemptedAt = :now, nextAttemptAt = :next REMOVE ${OFF_DUE_LIST}`,
          ConditionExpression: "claims = :claims AND #status = :sending",
          ExpressionAttributeNames: { "#status": "status", "#error": "error" },
          ExpressionAttributeValues: {
            ":status": outcome.ok ? "succeeded" : "failed",
            ":rs": outcome.responseStatus,
            ":error": outcome.error,
            ":now": now,
            ":next": nextAt,
            ":claims": claims,
            ":sending": "sending",
          },
        },
      },
      onConditionFailed: () => new ClaimLost(),
    },
  ];
  if (nextAt) {
    const next = pendingAttempt(
      { pk: item.pk, sk: item.eventSk, id: item.eventId, type: item.type } as EventItem,
      item.endpointId,
      item.attempt + 1,
      nextAt,
    );
    writes.push(putAttempt(deps, next));
  }
  try {
    await commit({ db: deps.db }, writes);
  } catch (error) {
    // The lease ran out and another attempter took over: its record wins.
    if (!(error instanceof ClaimLost)) throw error;
  }
}

async function readEvent(deps: Pick<Deps, "db">, item: AttemptItem): Promise<EventItem | undefined> {
  const out = await deps.db.doc.send(
    new GetCommand({ TableName: deps.db.table, Key: { pk: item.pk, sk: item.eventSk } }),
  );
  return out.Item as EventItem | undefined;
}

/**
 * How the subscriber and the job make attempts (./fairness.ts): users in turn, at most 4 of one
 * user's in flight (half the slots), one at a time per endpoint — in stream order for first attempts,
 * and so that an endpoint that fails takes no second slot before its failure stops it for the run.
 */
export const ATTEMPT_LIMITS: FairLimits = { total: 8, perUser: 4, perEndpoint: 1 };
/**
 * What one run reads of the due list, at most: per shard (oldest due first), and per user across
 * the run, so a user with a deep backlog cannot fill the window the others' attempts are read in.
 */
const MAX_DUE_PER_SHARD = 500;
const MAX_DUE_PER_USER = 100;
/** Due items looked at per shard, taken or not: what a run's read costs at most (about 10 pages). */
const MAX_SCANNED_PER_SHARD = 20_000;
/** Without a deadline from the caller (`npm run jobs`, the local ticker): a run takes work this long. */
const LOCAL_RUN_BUDGET_MS = 50_000;
/** After the last attempt starts: its timeout and the writes that record it, before the deadline. */
const FINISH_MARGIN_MS = ATTEMPT_TIMEOUT_MS + 5_000;

/**
 * The `webhooks` job: the attempts due by `now` (retries, first attempts that a crash or a lost
 * lease left, redeliveries), read in a bounded window (readDue) and dispatched to the `webhooks`
 * queue, one message per endpoint with its attempts in due order, users in turns (queue/dispatch.ts);
 * the queue's workers make them fairly (webhooksWorker). It dispatches nothing after
 * `options.deadline` (the Lambda's remaining time, functions/src/lambda/jobs/scheduled.ts); in
 * process the workers stop starting attempts LOCAL_RUN_BUDGET_MS after the run began: what they did
 * not start stays due for the next run, counted as `deferred`.
 */
export async function runWebhooksJob(deps: Deps, now: Date, options: JobOptions = {}): Promise<JobResult> {
  const nowIsoString = now.toISOString();
  const takeUntil = (options.deadline ?? Date.now() + LOCAL_RUN_BUDGET_MS) - FINISH_MARGIN_MS;
  const due = await readDue(deps, nowIsoString, takeUntil);
  const byEndpoint = new Map<string, WorkMessage>();
  for (const item of due.items) {
    const group = `${item.userId}#${item.endpointId}`;
    let message = byEndpoint.get(group);
    if (!message) {
      message = {
        queue: "webhooks",
        now: nowIsoString,
        userId: item.userId,
        keys: [],
        data: { jobClock: true, takeUntil },
      };
      byEndpoint.set(group, message);
    }
    message.keys.push({ pk: item.pk, sk: item.sk });
  }
  const results = await Promise.all(
    batches(inTurns([...byEndpoint.values()])).map((batch) => handOff(deps, "webhooks", batch, webhooksWorker)),
  );
  const counts = { succeeded: 0, failed: 0, dropped: 0, skipped: 0, deferred: 0, ...tallyOf(results) };
  return {
    job: "webhooks",
    now: nowIsoString,
    changed: counts.succeeded + counts.failed + counts.dropped,
    ...counts,
    deferred: counts.deferred + due.leftUnread,
    ...(deps.workQueue ? { dispatched: due.items.length } : {}),
  };
}

/**
 * The `webhooks` queue's worker: each message is one endpoint's attempts in order (from the job, or
 * the first attempts of a stream batch from the subscriber). It reads each attempt (consistent),
 * keeps those whose time has come and that are still to make, and makes them fairly
 * (./fairness.ts: users in turn, one at a time per endpoint, an endpoint that fails takes no
 * more). It starts none after its deadline (the Lambda's time, or the job's run in process): those
 * stay due for the webhooks job (`deferred`).
 */
export const webhooksWorker: Worker = async (deps, messages, options = {}) => {
  const counts: Record<string, number> = { succeeded: 0, failed: 0, dropped: 0, skipped: 0, deferred: 0 };
  const retry: WorkMessage[] = [];
  const items: { item: AttemptItem; deps: AttemptDeps }[] = [];
  for (const message of messages) {
    // A job's attempts are stamped with its `now` (attemptedAt, the next retry); the subscriber's
    // with the clock.
    const attemptDeps = message.data?.jobClock ? { ...deps, clock: () => new Date(message.now) } : deps;
    const clockNow = nowIso(deps);
    const bound = clockNow > message.now ? clockNow : message.now;
    try {
      for (const key of message.keys) {
        const out = await deps.db.doc.send(
          new GetCommand({ TableName: deps.db.table, Key: key, ConsistentRead: true }),
        );
        const item = out.Item as AttemptItem | undefined;
        if (item && isDueEntry("webhooks", item, bound) && (item.status === "pending" || item.status === "sending"))
          items.push({ item, deps: attemptDeps });
        else counts.skipped!++;
      }
    } catch (error) {
      log("warn", "webhooks worker: a message failed; it comes again", { error: errorName(error) });
      retry.push(message);
    }
  }
  const takeUntils = messages.map((m) => m.data?.takeUntil).filter((t): t is number => typeof t === "number");
  const deadline = options.deadline ?? (takeUntils.length > 0 ? Math.min(...takeUntils) : undefined);
  const depsOf = new Map(items.map((entry) => [entry.item, entry.deps]));
  const { deferred } = await attemptFairly(
    items.map((entry) => entry.item),
    ATTEMPT_LIMITS,
    async (item) => {
      const result = await runAttempt(depsOf.get(item)!, item);
      counts[result]!++;
      return result;
    },
    { takeUntil: deadline === undefined ? undefined : deadline - (options.deadline ? FINISH_MARGIN_MS : 0) },
  );
  counts.deferred! += deferred;
  return { tally: counts, retry };
};

async function readDue(
  deps: Deps,
  now: string,
  takeUntil: number,
): Promise<{ items: AttemptItem[]; leftUnread: number }> {
  const items: AttemptItem[] = [];
  const perUser = new Map<string, number>();
  let leftUnread = 0;
  const shards = Array.from({ length: DUE_SHARDS }, (_, shard) => shard);
  await Promise.all(
    shards.map(async (shard) => {
      let read = 0;
      let scanned = 0;
      for await (const raw of dueItems(deps.db, "webhooks", now, { shard })) {
        const item = raw as unknown as AttemptItem;
        const ofUser = perUser.get(item.userId) ?? 0;
        scanned++;
        const full = read >= MAX_DUE_PER_SHARD || scanned > MAX_SCANNED_PER_SHARD;
        // Out of time: still counted (reading is quick, and bounded by the scan), never taken.
        if (full || ofUser >= MAX_DUE_PER_USER || Date.now() >= takeUntil) {
          leftUnread++;
          if (full) break;
          continue;
        }
        perUser.set(item.userId, ofUser + 1);
        items.push(item);
        read++;
      }
    }),
  );
  // Oldest due first across shards: each user's endpoints then take their attempts in due order.
  items.sort((a, b) => (dueOrder(a) < dueOrder(b) ? -1 : 1));
  return { items, leftUnread };
}

/**
 * Redeliver (docs/events.md, "Redelivering"): the event again, to an endpoint it was sent to.
 * - Its automatic retry is pending (the receiver is fixed and should not wait hours): that retry is
 *   moved to now, keeping its place in the schedule — no second copy.
 * - Its attempts are over (succeeded, or failed and given up): one more attempt, due now, made once
 *   (`redelivery`: not retried by itself).
 * - An attempt is in flight, or a redelivery of it is pending already: 422 invalid_transition.
 * The `webhooks` job makes it (the operator's command line at once). The endpoint must be enabled.
 * The event is looked for among the endpoint's attempts, newest first (a redelivery is rare, and
 * the attempts kept are 30 days').
 */
const REDELIVERY_SEARCH_PAGES = 10;

export async function redeliver(ctx: Ctx, endpointId: number, eventId: string): Promise<AttemptItem> {
  const endpoint = await getEndpoint(ctx, endpointId);
  const latest = await latestAttempt(ctx, ctx.userId, endpointId, eventId);
  if (!latest) throw notFound("delivery of event", eventId);
  if (!endpoint.enabled)
    throw new DomainError("invalid_transition", "the endpoint is disabled: enable it (PATCH enabled: true) first");
  const inFlight = () => new DomainError("invalid_transition", "an attempt of this event is in flight already");
  if (latest.status === "sending" || (latest.status === "pending" && latest.redelivery)) throw inFlight();
  const now = nowIso(ctx);
  if (latest.status === "pending") {
    const due = onDueList("webhooks", latest.userId, latest.sk, now);
    const moved = { ...latest, ...due.keys, nextAttemptAt: now };
    await commit(ctx, [
      {
        op: {
          Update: {
            TableName: ctx.db.table,
            Key: { pk: latest.pk, sk: latest.sk },
            UpdateExpression: `SET ${due.set}, nextAttemptAt = :now`,
            ConditionExpression: "#status = :pending AND claims = :claims",
            ExpressionAttributeNames: { "#status": "status" },
            ExpressionAttributeValues: {
              ...due.values,
              ":now": now,
              ":pending": "pending",
              ":claims": latest.claims,
            },
          },
        },
        onConditionFailed: inFlight,
      },
    ]);
    return moved;
  }
  if (!(await readEvent(ctx, latest))) throw notFound("event", eventId);
  const item: AttemptItem = {
    ...pendingAttempt(
      { pk: latest.pk, sk: latest.eventSk, id: latest.eventId, type: latest.type } as EventItem,
      endpointId,
      latest.attempt + 1,
      now,
    ),
    redelivery: true,
  };
  await commit(ctx, [{ ...putAttempt(ctx, item), onConditionFailed: inFlight }]);
  return item;
}

async function latestAttempt(
  deps: Pick<Deps, "db">,
  userId: string,
  endpointId: number,
  eventId: string,
): Promise<AttemptItem | undefined> {
  let startKey: Record<string, unknown> | undefined;
  for (let page = 0; page < REDELIVERY_SEARCH_PAGES; page++) {
    const out: QueryCommandOutput = await deps.db.doc.send(
      new QueryCommand({
        TableName: deps.db.table,
        KeyConditionExpression: "pk = :p AND begins_with(sk, :s)",
        FilterExpression: "eventId = :e",
        ExpressionAttributeValues: { ":p": userPk(userId), ":s": attemptsPrefix(endpointId), ":e": eventId },
        ScanIndexForward: false,
        ExclusiveStartKey: startKey,
      }),
    );
    const found = (out.Items ?? []) as AttemptItem[];
    // Newest due first: the latest attempt (a retry is always due after the attempt before it).
    if (found.length > 0) return found.reduce((a, b) => (b.attempt > a.attempt ? b : a));
    startKey = out.LastEvaluatedKey;
    if (!startKey) return undefined;
  }
  return undefined;
}

/**
 * The operator's redelivery (`npm run jobs -- redeliver-webhook`): the same checks and new attempt
 * as the endpoint's owner gets through the API, then the attempt itself at once. Returns the
 * attempt as `GET …/deliveries` lists it.
 */
export async function redeliverNow(deps: Deps, userId: string, endpointId: number, eventId: string): Promise<Delivery> {
  const item = await redeliver({ ...deps, userId }, endpointId, eventId);
  await runAttempt(deps, item);
  const out = await deps.db.doc.send(new GetCommand({ TableName: deps.db.table, Key: { pk: item.pk, sk: item.sk } }));
  return toDelivery(out.Item as AttemptItem);
}
