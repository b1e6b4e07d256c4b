import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { GetCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { Deps } from "../deps";
import { nowIso } from "../deps";
import { commit, type Write } from "../db/commit";
import { dueKeys, OFF_DUE_LIST, onDueList, pad, userPk } from "../db/keys";
import { EVENT_RETENTION_SECONDS, toEvent, type EventItem } from "../events/store";
import { endpointKey, findEndpoint, signingSecrets, subscribes, type WebhookEndpointItem } from "./endpoints";
import { postWebhook } from "./post";
import type { Delivery } from "./resource";
import { METRIC } from "../observability/metric-names";
import { countMetric } from "../observability/metrics";
import type { AttemptResult, FairLimits } from "./fairness";
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
export const ATTEMPT_TIMEOUT_MS = 10_000;
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

export const attemptsPrefix = (endpointId: number) => `${SK_PREFIX}${pad(endpointId)}#`;

/** Whose attempt a key names, and to which endpoint (sk = WEBHOOK_ATTEMPT#<endpoint>#…). */
export const attemptOfKey = (pk: string, sk: string) => ({
  userId: pk.slice("USER#".length),
  endpointId: Number(sk.slice(SK_PREFIX.length).split("#")[0]),
});

/** A pending attempt of `event` to `endpointId`, due at `dueAt`. */
export function pendingAttempt(event: EventItem, endpointId: number, attempt: number, dueAt: string): AttemptItem {
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

export async function readEvent(deps: Pick<Deps, "db">, item: AttemptItem): Promise<EventItem | undefined> {
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
